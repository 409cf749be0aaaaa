// How long the service takes to start: from spawning `node src/main.ts` (with `npm start`'s Node
// flags) to Fastify's "Server listening" line, read from its log at LOG_LEVEL=info. On the
// embedded database, the first start on an empty DATA_DIR (initdb of the server, its start, the
// migrations) and a later start on the same DATA_DIR after a clean stop; on an external database,
// the first start on an empty database (the migrations) and a later one. Each is measured `rounds`
// times, each round on a new DATA_DIR (and database), and reported as the median and each value.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../tests/support/free-port.ts';
import { serviceNodeFlags } from './server.ts';

export interface StartTimes {
  /** Median of the rounds, ms. */
  firstMs: number;
  laterMs: number;
  /** Each round's, ms. */
  first: number[];
  later: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : Math.round(((s[mid - 1] as number) + (s[mid] as number)) / 2);
};

/** Spawns the service, waits for "Server listening", stops it (SIGTERM) and waits for its exit; the ms to listening. */
export async function timeStart(root: string, env: Record<string, string>): Promise<number> {
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
  const listening = new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
      if (output.includes('Server listening')) resolve(performance.now() - started);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening: ${output}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), 120_000);
  try {
    return Math.round(await listening);
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
export async function startTimes(root: string, rounds: number, prepare: (round: number) => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>, log: (line: string) => void): Promise<StartTimes> {
  const first: number[] = [];
  const later: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const { env, cleanup } = await prepare(round);
    try {
      const all = { SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'), ...env };
      first.push(await timeStart(root, all));
      later.push(await timeStart(root, all));
      log(`  start ${round + 1}/${rounds}: first ${first.at(-1)} ms, later ${later.at(-1)} ms`);
    } finally {
      await cleanup();
    }
  }
  return { firstMs: median(first), laterMs: median(later), first, later };
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
