// PGlite does not lock its data directory, and two processes on one directory lose writes.
import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory for this process; returns the function that gives it back. */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'storeops.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new DataDirLockedError(
          `the data directory ${dataDir} is in use by another storeops process (pid ${holder}); ` +
            'stop it first, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server',
        );
      }
      fs.rmSync(lockPath, { force: true }); // left by a process that is gone
    }
  }
  throw new DataDirLockedError(`could not lock the data directory ${dataDir}`);
}
