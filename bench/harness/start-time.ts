// How long the service takes to start: from spawning `node src/main.ts` (with `npm start`'s Node
// flags) to Fastify's "Server listening" line, read from its log at LOG_LEVEL=info. On the
// embedded database, the first start on an empty DATA_DIR (initdb of the server, its start, the
// migrations) and a later start on the same DATA_DIR after a clean stop; on an external database,
// the first start on an empty database (the migrations) and a later one. Each is measured `rounds`
// times, each round on a new DATA_DIR (and database), and reported as the median and each value.
// Beside the wall time, the processor time the start took (the service with the programs it ran
// and waited for, initdb among them, and the embedded server's processes), which the machine's
// other load moves much less: on a busy shared machine the wall time is mostly waiting for a core.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serverDir } from './embedded-layout.ts';
import { freePort } from '../../scripts/lib/free-port.ts';
import { serviceNodeFlags } from './server.ts';

export interface StartTimes {
  /** Median of the rounds, ms. */
  firstMs: number;
  laterMs: number;
  /** Each round's, ms. */
  first: number[];
  later: number[];
  /** Processor time of each start (user + system), ms: medians, and each round's. */
  firstCpuMs: number;
  laterCpuMs: number;
  firstCpu: number[];
  laterCpu: number[];
}

const TICK_MS = 10; // USER_HZ 100

/** utime + stime, and with `children` also cutime + cstime (the children it has waited for), in ms; 0 once ended. */
function cpuMs(pid: number, children: boolean): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return ((f[11] ?? 0) + (f[12] ?? 0) + (children ? (f[13] ?? 0) + (f[14] ?? 0) : 0)) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The processor time so far of the service and, on the embedded database, of its server's processes. */
function startCpuMs(servicePid: number, dataDir: string | null): number {
  let total = cpuMs(servicePid, true);
  if (dataDir === null) return total;
  try {
    const postmaster = Number(fs.readFileSync(path.join(serverDir(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
    total += cpuMs(postmaster, true);
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) total += cpuMs(Number(name), false);
      } catch {
        // ended meanwhile
      }
    }
  } catch {
    // no server (yet)
  }
  return total;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : Math.round(((s[mid - 1] as number) + (s[mid] as number)) / 2);
};

/**
 * Spawns the service, waits for "Server listening", stops it (SIGTERM) and waits for its exit: the
 * ms to listening, and the processor time spent by then.
 */
export async function timeStart(root: string, env: Record<string, string>): Promise<{ ms: number; cpuMs: number }> {
  const port = await freePort();
  const mqttPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...serviceNodeFlags(root), path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', MALLOC_ARENA_MAX: '2', HOST: '127.0.0.1', ...env, LOG_LEVEL: 'info', PORT: String(port), MQTT_PORT: String(mqttPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const embeddedDataDir = env.DATABASE_URL === undefined && env.DATA_DIR !== undefined ? env.DATA_DIR : null;
  const listening = new Promise<{ ms: number; cpuMs: number }>((resolve, reject) => {
    let heard = false;
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
      if (!heard && (heard = output.includes('Server listening')))
        resolve({ ms: Math.round(performance.now() - started), cpuMs: startCpuMs(child.pid as number, embeddedDataDir) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening: ${output}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), 120_000);
  try {
    return await listening;
  } finally {
    clearTimeout(timeout);
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

/**
 * `rounds` rounds of a first and a later start. `prepare(round)` gives the round's environment on
 * a new DATA_DIR (and, for an external database, a new database) and what to remove after it.
 */
export async function startTimes(
  root: string,
  rounds: number,
  prepare: (round: number) => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>,
  log: (line: string) => void,
): Promise<StartTimes> {
  const first: number[] = [];
  const later: number[] = [];
  const firstCpu: number[] = [];
  const laterCpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const { env, cleanup } = await prepare(round);
    try {
      const all = { SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'), ...env };
      const a = await timeStart(root, all);
      const b = await timeStart(root, all);
      first.push(a.ms);
      firstCpu.push(a.cpuMs);
      later.push(b.ms);
      laterCpu.push(b.cpuMs);
      log(`  start ${round + 1}/${rounds}: first ${a.ms} ms (CPU ${a.cpuMs} ms), later ${b.ms} ms (CPU ${b.cpuMs} ms); load ${os.loadavg()[0]?.toFixed(2)}`);
    } finally {
      await cleanup();
    }
  }
  return { firstMs: median(first), laterMs: median(later), first, later, firstCpuMs: median(firstCpu), laterCpuMs: median(laterCpu), firstCpu, laterCpu };
}

/** A new DATA_DIR under `dir` for each round (the embedded server's user must pass through `dir`). */
export function dataDirRounds(dir: string, database: (round: number) => Promise<{ url: string | null; drop: () => Promise<void> }>) {
  return async (round: number) => {
    const dataDir = path.join(dir, `start-${round}`);
    const db = await database(round);
    return {
      env: { DATA_DIR: dataDir, ...(db.url === null ? {} : { DATABASE_URL: db.url }) },
      cleanup: async () => {
        await db.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  };
}
