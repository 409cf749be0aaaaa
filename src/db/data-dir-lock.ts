// One service owns a data directory: it starts and stops the embedded server there. The lock is a
// file holding the owner's pid and, on Linux, the time that process started: a pid that was reused
// since (a container restarted, the machine rebooted) is not taken for the owner. A lock left by a
// process that is gone is taken over.
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseStartError } from './start-error.ts';

export class DataDirLockedError extends DatabaseStartError {
  /** The process that holds the directory. */
  readonly pid: number;
  constructor(message: string, pid: number) {
    super(message);
    this.pid = pid;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockPath(dataDir: string): string {
  return path.join(dataDir, 'storeops.lock');
}

/** When a process started (clock ticks since boot, /proc/PID/stat field 22), or null where there is no /proc. */
function startTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** The live process holding the data directory, or null. */
export function lockHolder(dataDir: string): number | null {
  let pid: number;
  let started: string | undefined;
  try {
    const [first, second] = fs.readFileSync(lockPath(dataDir), 'utf8').trim().split(/\s+/);
    pid = Number(first);
    started = second;
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) return null;
  const now = startTime(pid);
  return started !== undefined && now !== null && now !== started ? null : pid;
}

/** Takes the data directory for this process; returns the function that gives it back. */
export function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid} ${startTime(process.pid) ?? ''}`.trim(), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = lockHolder(dataDir);
      if (holder !== null) {
        throw new DataDirLockedError(
          `the data directory ${dataDir} is in use by another storeops process (pid ${holder}); ` +
            'stop it first, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server',
          holder,
        );
      }
      fs.rmSync(file, { force: true }); // left by a process that is gone
    }
  }
  throw new DataDirLockedError(`could not lock the data directory ${dataDir}`, 0);
}
