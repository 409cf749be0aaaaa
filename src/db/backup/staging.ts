// A new embedded server for a restore or a conversion, made beside its place and moved into it only
// once it holds everything: the server is made in DATA_DIR/postgres.staging/postgres, and renamed
// to DATA_DIR/postgres after it stopped. A run that fails, or is killed, leaves no DATA_DIR/postgres
// that a start would take for the real database; the next run removes what it left.
import fs from 'node:fs';
import path from 'node:path';
import { openDb, type Db } from '../db.ts';
import { processAlive } from '../data-dir-lock.ts';
import { serverDir, startEmbeddedServer } from '../embedded/server.ts';
import { serverUser } from '../embedded/server-user.ts';
import { syncDir } from './dump.ts';
import { DatabaseStartError } from '../start-error.ts';

export function stagingDir(dataDir: string): string {
  return path.join(dataDir, 'postgres.staging');
}

async function stopLeftover(staging: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(serverDir(staging), 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return;
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('postgres')) return; // a reused pid
  } catch {
    // No /proc: the pid in a server's own pid file is taken as its.
  }
  process.kill(pid, 'SIGQUIT'); // its database is thrown away: no shutdown checkpoint needed
  for (let i = 0; i < 200 && processAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Removes what an interrupted run left (stopping its server if a killed run left it running). */
export async function removeStaging(dataDir: string): Promise<void> {
  const staging = stagingDir(dataDir);
  if (!fs.existsSync(staging)) return;
  await stopLeftover(staging);
  fs.rmSync(staging, { recursive: true, force: true });
}

export interface BuildOptions {
  onLine?: (line: string) => void;
  /** Called with the stopped server's directory before it is moved into place. */
  beforeMove?: (dir: string) => void;
}

/**
 * Makes the embedded server of `dataDir` (which has none; the caller holds its lock), runs `work`
 * on it, stops it and moves it into place. On a failure nothing of it is left.
 */
export async function buildServer<T>(dataDir: string, work: (db: Db) => Promise<T>, opts: BuildOptions = {}): Promise<T> {
  await removeStaging(dataDir);
  const staging = stagingDir(dataDir);
  fs.mkdirSync(staging, { mode: 0o700 });
  // The server the service starts later runs as the user chosen by DATA_DIR's owner (server-user.ts):
  // the staging directory gets the same owner, so the same user made the files.
  const user = serverUser(dataDir);
  if (user !== null) {
    const owner = fs.statSync(dataDir);
    fs.chownSync(staging, owner.uid, owner.gid);
    fs.chmodSync(dataDir, owner.mode | 0o011); // the server's user passes through DATA_DIR, as server.ts allows
  }
  let moved = false;
  try {
    const server = await startEmbeddedServer({ dataDir: staging, ...(opts.onLine ? { onLine: opts.onLine } : {}) });
    let result: T;
    try {
      const db = await openDb({ url: server.url, poolSize: 2 });
      try {
        result = await work(db);
      } finally {
        await db.close();
      }
    } finally {
      await server.stop();
    }
    opts.beforeMove?.(serverDir(staging));
    fs.renameSync(serverDir(staging), serverDir(dataDir));
    moved = true;
    syncDir(dataDir);
    return result;
  } catch (err) {
    // A server that did not start: its log is kept where the service keeps its own.
    if (err instanceof DatabaseStartError) {
      keepLog(staging, dataDir);
      err.message = err.message.replaceAll(path.join(staging, 'postgres.log'), path.join(dataDir, 'postgres.log'));
    }
    throw err;
  } finally {
    if (moved) {
      keepLog(staging, dataDir);
      fs.rmSync(staging, { recursive: true, force: true });
    } else {
      await removeStaging(dataDir);
    }
  }
}

function keepLog(staging: string, dataDir: string): void {
  const log = path.join(staging, 'postgres.log');
  if (fs.existsSync(log)) fs.appendFileSync(path.join(dataDir, 'postgres.log'), fs.readFileSync(log), { mode: 0o600 });
}
