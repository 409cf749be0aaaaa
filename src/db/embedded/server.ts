// The embedded database: a real PostgreSQL server in DATA_DIR/postgres, made by initdb on the
// first start, started with the service and stopped with it. It listens on no network address,
// only on a Unix socket inside its own data directory (mode 0700: the service's user, and root,
// can connect), so it needs no password. It runs in a process group of its own, so a Ctrl-C in
// the terminal reaches the service, which stops it after its last query; a service killed outright
// leaves it running, and the next start stops it (a fast shutdown: what was committed is kept)
// and starts it again with this release's settings.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { processAlive } from '../data-dir-lock.ts';
import { findBinaries, type ServerBinaries } from './binaries.ts';
import { canEnter, serverUser, type ServerUser } from './server-user.ts';
import { DatabaseStartError } from '../start-error.ts';

export const SUPERUSER = 'storeops';
export const DATABASE = 'storeops';
const PORT = '5432';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** The server could not be made or started: one line for the operator. */
export class ServerStartError extends DatabaseStartError {}

export interface EmbeddedServerOptions {
  dataDir: string;
  /** Settings for this run of the server (`-c name=value`), e.g. the test suite's. */
  settings?: Readonly<Record<string, string>>;
  /** What the start did that an operator should hear of (a first initdb, a stopped leftover). */
  onLine?: (line: string) => void;
}

export interface EmbeddedServer {
  /** How the service connects: the socket directory, no password. */
  readonly url: string;
  readonly pid: number;
  /** Resolves when the server has ended, asked to or not. */
  readonly ended: Promise<void>;
  /** A fast shutdown: sessions end, what was committed is kept. */
  stop(): Promise<void>;
}

export function serverDir(dataDir: string): string {
  return path.join(dataDir, 'postgres');
}

/** The connection URL of the server of `dataDir` (running or not). */
export function embeddedUrl(dataDir: string, database: string = DATABASE): string {
  return `postgresql://${SUPERUSER}@localhost/${database}?host=${encodeURIComponent(serverDir(dataDir))}`;
}

function majorOf(binaries: ServerBinaries): string {
  return /@(\d+)\./.exec(binaries.source)?.[1] ?? '?';
}

/** What a failed program said last: its last two lines of note (PostgreSQL logs the cause, then
 * the FATAL that follows from it), without their timestamps. */
function lastWords(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const noted = lines.filter((l) => /FATAL|ERROR|PANIC|LOG|error/i.test(l)).slice(-2);
  const chosen = noted.length > 0 ? noted : lines.slice(-1);
  return chosen.map((l) => l.replace(/^\S+ \S+ \S+ \[\d+\] [A-Z]+:\s+/, '')).join('; ') || 'no output';
}

function environment(binaries: ServerBinaries): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LC_ALL: 'C', TZ: 'UTC' };
  if (binaries.libraryPath !== null) env.LD_LIBRARY_PATH = binaries.libraryPath;
  return env;
}

function initdb(dataDir: string, binaries: ServerBinaries, user: ServerUser | null): void {
  const target = serverDir(dataDir);
  for (const name of fs.readdirSync(dataDir)) {
    if (name.startsWith('postgres.init-')) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
  // Made beside its place and renamed: a start interrupted half-way leaves no server directory.
  const staging = `${target}.init-${process.pid}`;
  fs.mkdirSync(staging, { mode: 0o700 });
  if (user !== null) fs.chownSync(staging, user.uid, user.gid);
  const result = spawnSync(binaries.initdb, ['-D', staging, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'], {
    env: environment(binaries),
    encoding: 'utf8',
    ...(user === null ? {} : { uid: user.uid, gid: user.gid }),
  });
  if (result.status !== 0) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new ServerStartError(
      `initdb of the embedded PostgreSQL server in ${target} failed: ${lastWords(`${result.stdout}\n${result.stderr}${result.error ? `\n${result.error.message}` : ''}`)}`,
    );
  }
  fs.renameSync(staging, target);
}

/** The server a killed service left running on this directory, if any. */
function leftoverPid(dir: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return null;
  try {
    // A pid reused by another program since (after a reboot) is not ours to stop.
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('postgres')) return null;
  } catch {
    // No /proc (macOS): PostgreSQL's own check of postmaster.pid decides at start.
  }
  return pid;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

async function stopPid(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT'); // fast shutdown
  if (await waitForExit(pid, STOP_TIMEOUT_MS)) return;
  process.kill(pid, 'SIGQUIT'); // immediate: crash recovery at the next start keeps what committed
  if (!(await waitForExit(pid, 10_000))) throw new ServerStartError(`the embedded PostgreSQL server (pid ${pid}) did not stop`);
}

async function connects(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function readFrom(file: string, offset: number): string {
  try {
    const buffer = fs.readFileSync(file);
    return buffer.subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

async function waitUntilReady(child: ChildProcess, dataDir: string, logFile: string, logOffset: number): Promise<void> {
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited !== null) {
      throw new ServerStartError(`the embedded PostgreSQL server did not start: ${lastWords(readFrom(logFile, logOffset))} (its log: ${logFile})`);
    }
    if (fs.existsSync(path.join(serverDir(dataDir), `.s.PGSQL.${PORT}`)) && (await connects(embeddedUrl(dataDir, 'postgres')))) return;
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new ServerStartError(`the embedded PostgreSQL server did not answer within ${READY_TIMEOUT_MS / 1000} s (its log: ${logFile})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

async function ensureDatabase(dataDir: string): Promise<void> {
  const client = new pg.Client({ connectionString: embeddedUrl(dataDir, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/** Starts the server of `dataDir` (making it on the first start). The caller holds the data directory. */
export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const { dataDir } = opts;
  const binaries = findBinaries(path.join(dataDir, 'postgres-lib'));
  const user = serverUser(dataDir);
  if (user !== null) {
    // The server's user must be able to pass through DATA_DIR (not to list it).
    fs.chmodSync(dataDir, fs.statSync(dataDir).mode | 0o011);
    if (!canEnter(user, dataDir)) {
      throw new ServerStartError(
        `the embedded PostgreSQL server runs as the user ${user.name}, who cannot reach DATA_DIR ${dataDir}: let it through the parent directories (chmod o+x), or choose another DATA_DIR`,
      );
    }
  }
  const dir = serverDir(dataDir);
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) {
      throw new ServerStartError(`${dir} is not a PostgreSQL data directory, and not empty: move it away`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    const started = Date.now();
    initdb(dataDir, binaries, user);
    opts.onLine?.(`made a new embedded PostgreSQL ${majorOf(binaries)} server in ${dir} (${Date.now() - started} ms)`);
  }
  const made = fs.readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim();
  if (made !== majorOf(binaries)) {
    throw new ServerStartError(
      `the embedded database in ${dir} was made by PostgreSQL ${made}, and this install runs PostgreSQL ${majorOf(binaries)} (${binaries.source}): ` +
        'back it up with the release that made it (npm run backup -- FILE) and restore it into an empty DATA_DIR with this one (npm run restore -- FILE)',
    );
  }
  const leftover = leftoverPid(dir);
  if (leftover !== null) {
    opts.onLine?.(`stopping the embedded PostgreSQL server a previous start left running (pid ${leftover})`);
    await stopPid(leftover);
  }
  const logFile = path.join(dataDir, 'postgres.log');
  const log = fs.openSync(logFile, 'a', 0o600);
  const logOffset = fs.fstatSync(log).size;
  const settings: Record<string, string> = {
    listen_addresses: '',
    unix_socket_directories: dir,
    unix_socket_permissions: '0700',
    port: PORT,
    ...opts.settings,
  };
  let child: ChildProcess;
  try {
    child = spawn(binaries.postgres, ['-D', dir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])], {
      detached: true,
      stdio: ['ignore', log, log],
      env: environment(binaries),
      ...(user === null ? {} : { uid: user.uid, gid: user.gid }),
    });
  } finally {
    fs.closeSync(log);
  }
  child.unref();
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once('error', (err) => reject(new ServerStartError(`could not run ${binaries.postgres}: ${err.message}`))),
  );
  await Promise.race([waitUntilReady(child, dataDir, logFile, logOffset), spawnFailed]);
  const pid = child.pid as number;
  const ended = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  await ensureDatabase(dataDir);
  let stopping: Promise<void> | null = null;
  return {
    url: embeddedUrl(dataDir),
    pid,
    ended,
    stop: () => (stopping ??= processAlive(pid) ? stopPid(pid) : Promise.resolve()),
  };
}
