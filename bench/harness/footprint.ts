// The idle service's resident memory and what it is: the kernel's view (/proc/PID/smaps_rollup:
// anonymous memory vs mapped files such as node's binary and libraries) and the process's own
// (V8's heap, buffers outside it), read through bench/harness/memory-probe.ts. With the embedded
// database, also the proportional set size (PSS) of the service and of every process of its
// PostgreSQL server: RSS would count the server's shared memory and binary once per process.
import fs from 'node:fs';
import path from 'node:path';
import { serverDir } from './embedded-layout.ts';
import type { Server } from './server.ts';

export interface Footprint {
  rssMb: number;
  /** Resident pages of mapped files (node's binary, shared libraries): code, mostly shared. */
  fileMb: number;
  /** Anonymous resident memory: V8's heap, the allocator's, buffers, wasm, stacks. */
  anonymousMb: number;
  /** V8's heap as reserved (heapTotal) and as used. */
  heapTotalMb: number;
  heapUsedMb: number;
  /** V8's code space and compiled bytecode inside the heap. */
  codeMb: number;
  /** Memory V8 knows of outside its heap (Buffers, ArrayBuffers). */
  externalMb: number;
  /** Anonymous memory V8 does not account for: the C++ allocator, Node's and libuv's native state, thread stacks. */
  nativeMb: number;
  /** The service process's proportional set size. */
  pssMb: number;
  /** The embedded PostgreSQL server's processes (postmaster and its children); null with an external database. */
  embedded: EmbeddedServerMemory | null;
  /** The service's PSS plus its embedded server's (the service's alone with an external database, whose server is shared). */
  totalPssMb: number;
}

export interface EmbeddedServerMemory {
  postmasterPid: number;
  /** Each process's command line (as ps shows it: "postgres: checkpointer", ...) and PSS. */
  processes: { pid: number; name: string; pssMb: number }[];
  pssMb: number;
  /** Their RSS summed, for comparison: it counts shared memory and code once per process. */
  rssMb: number;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function rollupKb(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').matchAll(/^(\w+):\s+(\d+) kB/gm)) out[m[1] as string] = Number(m[2]);
  return out;
}

/** The parent pid of every process of the machine, from /proc/PID/stat (field 4, after "(comm)"). */
function parentPids(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** The pids of the embedded server of DATA_DIR: its postmaster (postmaster.pid's first line) and the processes it started. */
export function embeddedServerPids(dataDir: string): { postmasterPid: number; pids: number[] } {
  const postmasterPid = Number(fs.readFileSync(path.join(serverDir(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = [...parentPids()].filter(([, ppid]) => ppid === postmasterPid).map(([pid]) => pid);
  return { postmasterPid, pids: [postmasterPid, ...children.sort((a, b) => a - b)] };
}

/** The embedded server's memory now: PSS (and RSS) of each of its processes. */
export function embeddedServerMemory(dataDir: string): EmbeddedServerMemory {
  const { postmasterPid, pids } = embeddedServerPids(dataDir);
  const processes: EmbeddedServerMemory['processes'] = [];
  let rssKb = 0;
  for (const pid of pids) {
    try {
      const r = rollupKb(pid);
      const name = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      processes.push({ pid, name: pid === postmasterPid ? 'postmaster' : name, pssMb: mb((r.Pss ?? 0) * 1024) });
      rssKb += r.Rss ?? 0;
    } catch {
      // ended meanwhile (a backend whose connection closed)
    }
  }
  return { postmasterPid, processes, pssMb: mb(processes.reduce((a, p) => a + p.pssMb, 0) * 2 ** 20), rssMb: mb(rssKb * 1024) };
}

/** What the probe (bench/harness/memory-probe.ts) writes when signalled. */
export interface Probe {
  heapTotal: number;
  heapUsed: number;
  external: number;
  spaces: Record<string, number>;
  codeStats: { code_and_metadata_size: number; bytecode_and_metadata_size: number };
  /** How late the service's event loop ran since the probe's previous answer (or its start). */
  eventLoopDelayMs: { p50: number; p99: number; max: number; samples: number };
}

/** Signals the service's probe and reads its answer. */
export async function readProbe(server: Pick<Server, 'pid'>, probeFile: string): Promise<Probe> {
  fs.rmSync(probeFile, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !fs.existsSync(probeFile); i++) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 100));
  return JSON.parse(fs.readFileSync(probeFile, 'utf8')) as Probe;
}

/**
 * Waits for the service to settle, then reads its memory, and its embedded server's when it runs on
 * the embedded database of `embeddedDataDir`. The service must run with the probe (probeArgs).
 */
export async function idleFootprint(server: Server, probeFile: string, embeddedDataDir: string | null, settleMs = 8_000): Promise<Footprint> {
  await new Promise((r) => setTimeout(r, settleMs));
  const probe = await readProbe(server, probeFile);
  const r = rollupKb(server.pid);
  const embedded = embeddedDataDir === null ? null : embeddedServerMemory(embeddedDataDir);
  const anonymous = (r.Anonymous ?? 0) * 1024;
  const rss = (r.Rss ?? 0) * 1024;
  const pss = (r.Pss ?? 0) * 1024;
  return {
    rssMb: mb(rss),
    fileMb: mb(rss - anonymous),
    anonymousMb: mb(anonymous),
    heapTotalMb: mb(probe.heapTotal),
    heapUsedMb: mb(probe.heapUsed),
    codeMb: mb(probe.codeStats.code_and_metadata_size + probe.codeStats.bytecode_and_metadata_size),
    externalMb: mb(probe.external),
    nativeMb: mb(anonymous - probe.heapTotal - probe.external),
    pssMb: mb(pss),
    embedded,
    totalPssMb: mb(pss + (embedded?.pssMb ?? 0) * 2 ** 20),
  };
}

/** Node arguments that load the probe. */
export function probeArgs(): string[] {
  return ['--import', 'bench/harness/memory-probe.ts'];
}
