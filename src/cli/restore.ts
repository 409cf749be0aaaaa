// npm run restore -- FILE: a backup (npm run backup) into an empty DATA_DIR: a new embedded server
// with the backup's migrations, exactly, and its rows. The next `npm start` applies this release's
// newer migrations, as after any upgrade. With DATABASE_URL the database is PostgreSQL's to restore,
// with its own tools (docs/operations.md, Backups).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config.ts';
import { loadBackup, migrationsFor } from '../db/backup/load.ts';
import { describeCounts, readHeader } from '../db/backup/format.ts';
import { buildServer } from '../db/backup/staging.ts';
import { DataDirLockedError, lockDataDir } from '../db/data-dir-lock.ts';
import { holdsPgliteData, pgliteDir } from '../db/embedded/open.ts';
import { serverDir } from '../db/embedded/server.ts';
import { migrate, readMigrations } from '../db/migrate.ts';

const file = process.argv[2];
if (file === undefined || process.argv.length > 3) {
  console.error('usage: npm run restore -- FILE');
  process.exit(2);
}

/** Refuses a DATA_DIR that holds a database; holds it (the lock) while the restore runs. */
function takeEmptyDataDir(dataDir: string): () => void {
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new Error(
        `DATA_DIR ${dataDir} is in use by storeops process ${err.pid}: restore only into an empty DATA_DIR, with no service on it (set DATA_DIR to a new directory)`,
      );
    throw err;
  }
  const server = serverDir(dataDir);
  const held = holdsPgliteData(dataDir) ? pgliteDir(dataDir) : fs.existsSync(server) && fs.readdirSync(server).length > 0 ? server : null;
  if (held !== null) {
    release();
    throw new Error(
      `DATA_DIR ${dataDir} already holds a database (${held}); nothing was changed: restore only into an empty DATA_DIR (set DATA_DIR to a new directory)`,
    );
  }
  return release;
}

try {
  const config = loadConfig(process.env);
  if (config.databaseUrl !== null) {
    throw new ConfigError(
      'DATABASE_URL',
      'this command restores into the embedded database (DATA_DIR), and DATABASE_URL is set: restore into that PostgreSQL database with pg_restore, or psql for a plain dump (docs/operations.md, Backups)',
    );
  }
  const source = path.resolve(file);
  const header = await readHeader(source);
  const migrations = migrationsFor(header.migrations, source);
  const dataDir = config.dataDir;
  const made = !fs.existsSync(dataDir);
  let release = () => {};
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    release = takeEmptyDataDir(dataDir);
    const { counts } = await buildServer(
      dataDir,
      async (db) => {
        await migrate(db, migrations);
        return loadBackup(db, source);
      },
      { onLine: (line) => console.error(`storeops: ${line}`) },
    );
    const newer = readMigrations().length - migrations.length;
    console.log(
      `storeops: restored ${describeCounts(counts)} from ${source} (made ${header.made_at}) into ${dataDir}` +
        (newer > 0 ? `; the next start (npm start) applies this release's ${newer} newer migrations` : ''),
    );
  } catch (err) {
    release();
    release = () => {};
    if (made && fs.existsSync(dataDir) && fs.readdirSync(dataDir).length === 0) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  } finally {
    release();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : `restore failed: ${(err as Error).message}`}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
