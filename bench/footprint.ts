// The idle service's resident memory and what it is: the kernel's view (/proc/PID/smaps_rollup:
// anonymous memory vs mapped files such as node's binary and libraries) and the process's own
// (V8's heap, buffers outside it), read through bench/memory-probe.ts.
import fs from 'node:fs';
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
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function rollupKb(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').matchAll(/^(\w+):\s+(\d+) kB/gm)) out[m[1] as string] = Number(m[2]);
  return out;
}

/** Waits for the service to settle, then reads its memory. The service must run with the probe (probeArgs). */
export async function idleFootprint(server: Server, probeFile: string, settleMs = 8_000): Promise<Footprint> {
  await new Promise((r) => setTimeout(r, settleMs));
  fs.rmSync(probeFile, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !fs.existsSync(probeFile); i++) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 100));
  const probe = JSON.parse(fs.readFileSync(probeFile, 'utf8')) as { heapTotal: number; heapUsed: number; external: number; spaces: Record<string, number>; codeStats: { code_and_metadata_size: number; bytecode_and_metadata_size: number } };
  const r = rollupKb(server.pid);
  const anonymous = (r.Anonymous ?? 0) * 1024;
  const rss = (r.Rss ?? 0) * 1024;
  return {
    rssMb: mb(rss),
    fileMb: mb(rss - anonymous),
    anonymousMb: mb(anonymous),
    heapTotalMb: mb(probe.heapTotal),
    heapUsedMb: mb(probe.heapUsed),
    codeMb: mb(probe.codeStats.code_and_metadata_size + probe.codeStats.bytecode_and_metadata_size),
    externalMb: mb(probe.external),
    nativeMb: mb(anonymous - probe.heapTotal - probe.external),
  };
}

/** Node arguments that load the probe. */
export function probeArgs(): string[] {
  return ['--import', 'bench/memory-probe.ts'];
}
