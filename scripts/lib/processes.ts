// Real processes for the reliability tests and the benchmark's soaks: service instances (node
// src/main.ts) and a private Mosquitto (the tests' PostgreSQL: tests/reliability/postgres.ts).
// Everything listens on 127.0.0.1 on free ports, and everything started is registered so that
// cleanupAll ends it (and removes its temp dirs) even when a test failed half-way: in the test's own
// teardown (`t.after(cleanupAll)`) when the test started it, in the file's `after` when `before` did.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';

export const root = path.resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];

/** Something for cleanupAll to end (newest first). */
export function atCleanup(cleanup: () => Promise<unknown>): void {
  cleanups.push(cleanup);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ends everything started so far, newest first; call it in `t.after` or `after`. Never throws. */
export async function cleanupAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `storeops-${prefix}-`));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Polls until check() is true; throws with `what` after `tries` polls (a bounded loop, never a hang). */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, { tries = 200, everyMs = 100 } = {}): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await sleep(everyMs);
  }
  throw new Error(`gave up waiting for ${what}`);
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

class Child {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  #output = '';

  constructor(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string }) {
    this.child = spawn(cmd, args, { cwd: opts.cwd ?? root, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => (this.#output = (this.#output + d.toString()).slice(-50_000));
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get output(): string {
    return this.#output;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.running) this.child.kill(signal);
    await this.exited;
  }
}

/** `npm run --silent SCRIPT -- ARGS` with only PATH, HOME and env: its exit code and output. */
export function npmRun(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

/** A data directory the embedded server's user (not root) can reach, in `parent`. */
export function dataDirIn(parent: string, name: string): string {
  fs.chmodSync(parent, 0o755);
  return path.join(parent, name);
}

export interface Service {
  name: string;
  url: string;
  port: number;
  env: Record<string, string>;
  pid: number;
  output(): string;
  running(): boolean;
  /** SIGKILL: no shutdown hook runs, in-flight transactions die with their connections. */
  crash(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `node src/main.ts` with env and waits for /readyz 200. PORT and MQTT_PORT are 0 unless
 * given (a port found free beforehand may be taken by then); the service says the port it got, and
 * `env` of the result carries it, so that a restart with that env comes back at the same address. */
export async function startService(name: string, env: Record<string, string>): Promise<Service> {
  const full: Record<string, string> = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: '0', MQTT_PORT: '0', ...env };
  const proc = new Child(process.execPath, [path.join(root, 'src/main.ts')], { env: { PATH: process.env.PATH ?? '', ...full } });
  cleanups.push(() => proc.kill('SIGKILL'));
  let url = '';
  await waitFor(
    `${name} to be ready`,
    async () => {
      if (!proc.running) throw new Error(`${name} exited (${String(proc.child.exitCode ?? proc.child.signalCode)}): ${proc.output}`);
      url ||= /storeops: ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.output)?.[1] ?? '';
      if (url === '') return false;
      try {
        return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
      } catch {
        return false;
      }
    },
    { tries: 1200 },
  ); // a start is not timed here: a loaded machine makes it slow
  full.PORT = new URL(url).port;
  return {
    name,
    url,
    port: Number(full.PORT),
    env: full,
    pid: proc.child.pid as number,
    output: () => proc.output,
    running: () => proc.running,
    crash: () => proc.kill('SIGKILL'),
    stop: async () => {
      await proc.kill('SIGTERM');
      return proc.exited;
    },
  };
}

// --- Mosquitto -------------------------------------------------------------------------------

export function mosquittoBinary(): string | null {
  const candidates = [process.env.MOSQUITTO_BIN, '/usr/sbin/mosquitto', '/usr/local/sbin/mosquitto', '/opt/homebrew/sbin/mosquitto'];
  return candidates.find((c): c is string => c !== undefined && c !== '' && fs.existsSync(c)) ?? null;
}

/** Why two instances on one PostgreSQL and one external broker cannot be tested here, or false. */
export function twoInstancesSkip(): string | false {
  if (!process.env.TEST_DATABASE_URL) return 'needs TEST_DATABASE_URL: two processes can share only a real PostgreSQL';
  return mosquittoBinary() === null ? 'needs mosquitto (set MOSQUITTO_BIN) for the shared external broker' : false;
}

export interface Broker {
  port: number;
  url: string;
  /** Graceful stop (SIGTERM): Mosquitto writes its persistence file on the way out. */
  stop(): Promise<void>;
  start(): Promise<void>;
  output(): string;
}

/** A private Mosquitto on a free port: anonymous, persistence in its own temp dir. */
export async function startMosquitto(): Promise<Broker> {
  const bin = mosquittoBinary();
  if (bin === null) throw new Error('mosquitto is not installed');
  const dir = tempDir('mosquitto');
  const port = await freePort();
  const conf = path.join(dir, 'mosquitto.conf');
  // Started as root, Mosquitto switches to its own user, which must be able to write the dir.
  if (process.getuid?.() === 0) {
    const ids = userIds('mosquitto');
    if (ids !== null) fs.chownSync(dir, ids.uid, ids.gid);
  }
  fs.writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence true',
      `persistence_location ${dir}/`,
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      '',
    ].join('\n'),
  );
  let proc: Child | null = null;
  const broker: Broker = {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    async start() {
      const started = new Child(bin, ['-c', conf], {});
      proc = started;
      cleanups.push(() => started.kill('SIGKILL'));
      await waitFor(`mosquitto on ${port}`, async () => {
        if (!started.running) throw new Error(`mosquitto exited: ${started.output}`);
        return portOpen(port);
      });
    },
    async stop() {
      await proc?.kill('SIGTERM');
    },
    output: () => proc?.output ?? '',
  };
  await broker.start();
  return broker;
}

export function userIds(user: string): { uid: number; gid: number } | null {
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
