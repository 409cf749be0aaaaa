// Real processes for the version 2 soak: service instances (`node src/main.ts`, as `npm start` runs
// it, ready when /readyz answers 200) and a private Mosquitto. Everything listens on 127.0.0.1, and
// everything started is registered so that cleanupAll ends it and removes its temp dirs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ends everything started so far, newest first. Never throws. */
export async function cleanupAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `storeops-${prefix}-`));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Polls until check() is true; throws with `what` after `tries` polls. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, { tries = 200, everyMs = 100 } = {}): Promise<void> {
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

  constructor(cmd: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

export interface Service {
  name: string;
  url: string;
  port: number;
  env: Record<string, string>;
  pid: number;
  output(): string;
  running(): boolean;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `node src/main.ts` with env and waits for /readyz 200. PORT and MQTT_PORT are 0 unless
 * given; the service's ready line ("storeops: ready at URL") says where it listens. */
export async function startService(name: string, env: Record<string, string>): Promise<Service> {
  const full: Record<string, string> = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: '0', MQTT_PORT: '0', ...env };
  const proc = new Child(process.execPath, [path.join(root, 'src/main.ts')], { PATH: process.env.PATH ?? '', ...full });
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
  );
  full.PORT = new URL(url).port;
  return {
    name,
    url,
    port: Number(full.PORT),
    env: full,
    pid: proc.child.pid as number,
    output: () => proc.output,
    running: () => proc.running,
    stop: async () => {
      await proc.kill('SIGTERM');
      return proc.exited;
    },
  };
}

function mosquittoBinary(): string | null {
  const candidates = [process.env.MOSQUITTO_BIN, '/usr/sbin/mosquitto', '/usr/local/sbin/mosquitto', '/opt/homebrew/sbin/mosquitto'];
  return candidates.find((c): c is string => c !== undefined && c !== '' && fs.existsSync(c)) ?? null;
}

function userIds(user: string): { uid: number; gid: number } | null {
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export interface Broker {
  port: number;
  url: string;
}

/** A private Mosquitto (MOSQUITTO_BIN or the usual places) on a free port: anonymous, persistence in its own temp dir. */
export async function startMosquitto(): Promise<Broker> {
  const bin = mosquittoBinary();
  if (bin === null) throw new Error('mosquitto is not installed (set MOSQUITTO_BIN)');
  const dir = tempDir('mosquitto');
  const port = await freePort();
  const conf = path.join(dir, 'mosquitto.conf');
  // Started as root, Mosquitto switches to its own user, which must be able to write the dir.
  if (process.getuid?.() === 0) {
    const ids = userIds('mosquitto');
    if (ids !== null) fs.chownSync(dir, ids.uid, ids.gid);
  }
  const lines = [
    `listener ${port} 127.0.0.1`,
    'allow_anonymous true',
    'persistence true',
    `persistence_location ${dir}/`,
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    '',
  ];
  fs.writeFileSync(conf, lines.join('\n'));
  const proc = new Child(bin, ['-c', conf], process.env);
  cleanups.push(() => proc.kill('SIGKILL'));
  await waitFor(`mosquitto on ${port}`, async () => {
    if (!proc.running) throw new Error(`mosquitto exited: ${proc.output}`);
    return portOpen(port);
  });
  return { port, url: `mqtt://127.0.0.1:${port}` };
}
