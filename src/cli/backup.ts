// npm run backup -- FILE: a consistent copy of the embedded database, made while the service runs
// (through its server) or not (starting the server for the copy). A logical backup: the rows of
// every table in one snapshot, gzipped JSON lines (db/backup/format.ts). With DATABASE_URL the
// database is PostgreSQL's to copy, with its own tools (docs/operations.md, Backups).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config.ts';
import { writeBackupFile } from '../db/backup/dump.ts';
import { describeCounts } from '../db/backup/format.ts';
import { holdsPgliteData } from '../db/embedded/open.ts';
import { serverDir } from '../db/embedded/server.ts';
import { openConfiguredDb } from '../db/open.ts';

const file = process.argv[2];
if (file === undefined || process.argv.length > 3) {
  console.error('usage: npm run backup -- FILE');
  process.exit(2);
}

try {
  const config = loadConfig(process.env);
  if (config.databaseUrl !== null) {
    throw new ConfigError(
      'DATABASE_URL',
      'this command backs up the embedded database (DATA_DIR), and DATABASE_URL is set: back up that PostgreSQL database with pg_dump -Fc (docs/operations.md, Backups)',
    );
  }
  const target = path.resolve(file);
  // Said before the database is opened (which may start its server).
  if (fs.existsSync(target)) throw new Error(`${target} already exists: choose another name (a backup never overwrites a file)`);
  // A DATA_DIR without a database is a mistyped one: the backup would make a new, empty server there.
  const { dataDir } = config;
  if (!holdsPgliteData(dataDir) && !fs.existsSync(path.join(serverDir(dataDir), 'PG_VERSION'))) {
    throw new Error(`DATA_DIR ${dataDir} holds no database (no ${serverDir(dataDir)}): set DATA_DIR to the service's`);
  }
  const started = Date.now();
  const db = await openConfiguredDb(config, { attach: true, onWait: (line) => console.error(`storeops: ${line}`) });
  try {
    const { counts, bytes } = await writeBackupFile(db, target);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`storeops: backed up ${describeCounts(counts)} to ${target} (${(bytes / 1024 / 1024).toFixed(1)} MB, ${seconds} s)`);
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : `backup failed: ${(err as Error).message}`}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
