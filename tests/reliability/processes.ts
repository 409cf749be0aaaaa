// Real processes for the reliability tests: service instances (node src/main.ts), a private
// Mosquitto, a private PostgreSQL cluster, a database of the file's own on TEST_DATABASE_URL.
// Everything listens on 127.0.0.1 on free ports, and everything started is registered so the
// file's `after` can end it (and remove its temp dirs) even when a test failed half-way.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const root = path.resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ends everything this file started, newest first; call it in `after`. Never throws. */
export async function cleanupAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `storeops-${prefix}-`));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
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

/** Starts `node src/main.ts` with env (PORT, MQTT_PORT free unless given) and waits for /readyz 200. */
export async function startService(name: string, env: Record<string, string>): Promise<Service> {
  const full: Record<string, string> = {
    HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    ...env,
    PORT: env.PORT ?? String(await freePort()),
    MQTT_PORT: env.MQTT_PORT ?? String(await freePort()),
  };
  const proc = new Child(process.execPath, [path.join(root, 'src/main.ts')], { env: { PATH: process.env.PATH ?? '', ...full } });
  cleanups.push(() => proc.kill('SIGKILL'));
  const url = `http://127.0.0.1:${full.PORT}`;
  await waitFor(`${name} to be ready`, async () => {
    if (!proc.running) throw new Error(`${name} exited (${String(proc.child.exitCode ?? proc.child.signalCode)}): ${proc.output}`);
    try {
      return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
    } catch {
      return false;
    }
  }, { tries: 300 });
  return {
    name, url, port: Number(full.PORT), env: full, pid: proc.child.pid as number,
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
  fs.writeFileSync(conf, [
    `listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence true', `persistence_location ${dir}/`,
    'log_dest stderr', 'log_type error', 'log_type warning', '',
  ].join('\n'));
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

function userIds(user: string): { uid: number; gid: number } | null {
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

// --- PostgreSQL ------------------------------------------------------------------------------

/** Where initdb and pg_ctl are, or why a private cluster cannot be made here. */
export function postgresBinaries(): { bindir: string } | { reason: string } {
  const fromEnv = process.env.PG_BINDIR;
  const dirs = fromEnv ? [fromEnv] : [];
  if (fs.existsSync('/usr/lib/postgresql')) {
    for (const v of fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))) dirs.push(`/usr/lib/postgresql/${v}/bin`);
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) dirs.push(pgConfig.stdout.trim());
  const bindir = dirs.find((d) => fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'pg_ctl')));
  if (bindir === undefined) return { reason: 'no PostgreSQL server binaries (initdb, pg_ctl) found; set PG_BINDIR' };
  if (process.getuid?.() === 0 && userIds('postgres') === null) return { reason: 'running as root and there is no postgres user to run initdb as' };
  return { bindir };
}

export interface Cluster {
  url: string;
  port: number;
  /** pg_ctl stop -m immediate: every backend dies at once, as in a crash; restart does recovery. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT to the server and its backends: connections stay open, nothing answers
   * (a paused VM, or a network that drops packets instead of refusing them). */
  freeze(): void;
  thaw(): void;
}

/** The postmaster (first line of postmaster.pid) and its children, from /proc. */
function clusterPids(data: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === postmaster ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
  return [postmaster, ...children];
}

/** A throwaway PostgreSQL cluster (initdb into a temp dir) on a free port of 127.0.0.1. */
export async function startCluster(): Promise<Cluster> {
  const found = postgresBinaries();
  if ('reason' in found) throw new Error(found.reason);
  const dir = tempDir('pg');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = userIds('postgres') as { uid: number; gid: number };
    fs.chownSync(dir, ids.uid, ids.gid);
  }
  // initdb refuses to run as root: run the server's tools as the postgres user.
  const run = (tool: string, args: string[]) => {
    const cmd = path.join(found.bindir, tool);
    const r = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}${r.stdout}`);
  };
  const data = path.join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50 -c shared_buffers=16MB`;
  let started = false;
  const cluster: Cluster = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
      started = true;
    },
    async stop() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      started = false;
    },
    freeze() {
      for (const pid of clusterPids(data)) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of clusterPids(data)) process.kill(pid, 'SIGCONT');
    },
  };
  cleanups.push(async () => {
    if (!started) return;
    cluster.thaw();
    await cluster.stop();
  });
  await cluster.start();
  return cluster;
}

/** A database of this file's own on the server of `serverUrl`, dropped at the end. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const name = `storeops_rel_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A plain pg pool onto a test's database, for reading what the services wrote; closed at the end. */
export function inspect(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  cleanups.push(() => pool.end());
  return pool;
}
