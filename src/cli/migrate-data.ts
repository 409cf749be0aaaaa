// npm run migrate-data -- DATA_DIR: converts the embedded database of an earlier release (PGlite, in
// DATA_DIR/pglite) into this release's embedded PostgreSQL server (DATA_DIR/postgres): a dump of
// the PGlite database (db/backup/dump.ts) loaded into a new server with the same migrations, its
// counts checked. The PGlite directory is kept, renamed DATA_DIR/pglite.converted-<time>, for the
// operator to delete once satisfied. Run again after an interruption, it starts over or finishes.
import fs from 'node:fs';
import path from 'node:path';
import { writeBackupFile, syncDir } from '../db/backup/dump.ts';
import { describeCounts, readHeader } from '../db/backup/format.ts';
import { loadBackup, migrationsFor } from '../db/backup/load.ts';
import { openPgliteDb } from '../db/backup/pglite.ts';
import { buildServer } from '../db/backup/staging.ts';
import { DataDirLockedError, lockDataDir } from '../db/data-dir-lock.ts';
import { holdsPgliteData, pgliteDir } from '../db/embedded/open.ts';
import { serverDir } from '../db/embedded/server.ts';
import { migrate } from '../db/migrate.ts';

/** Left in a converted server's directory until the PGlite one is renamed: a run that was
 * interrupted between the two renames knows the server is the conversion's, and finishes. */
const MARKER = 'storeops-converted-from-pglite';

const arg = process.argv[2];
if (arg === undefined || process.argv.length > 3) {
  console.error('usage: npm run migrate-data -- DATA_DIR');
  process.exit(2);
}
const dataDir = path.resolve(arg);

/** Renames the PGlite directory aside (kept) and drops the marker; returns the new name. */
function retirePglite(): string {
  const kept = `${pgliteDir(dataDir)}.converted-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(pgliteDir(dataDir), kept);
  syncDir(dataDir);
  fs.rmSync(path.join(serverDir(dataDir), MARKER), { force: true });
  return kept;
}

async function convert(): Promise<string> {
  if (!holdsPgliteData(dataDir)) {
    const done = fs.existsSync(dataDir) ? fs.readdirSync(dataDir).filter((n) => n.startsWith('pglite.converted-')) : [];
    if (done.length > 0)
      throw new Error(`${dataDir} was converted already (the earlier database is kept in ${path.join(dataDir, done[0] as string)}); start the service`);
    throw new Error(`${dataDir} holds no database of an earlier release (no ${path.join(pgliteDir(dataDir), 'PG_VERSION')}): nothing to convert`);
  }
  const server = serverDir(dataDir);
  if (fs.existsSync(path.join(server, MARKER))) {
    return `finished an interrupted conversion of ${dataDir}; the earlier database is kept in ${retirePglite()}: delete it once satisfied`;
  }
  if (fs.existsSync(server) && fs.readdirSync(server).length > 0) {
    throw new Error(`${server} already holds a database, and ${pgliteDir(dataDir)} one of an earlier release; nothing was changed: move one of them away`);
  }
  const started = Date.now();
  // The dump is kept in a file: the PGlite database is closed before the new server starts.
  const dump = path.join(dataDir, 'pglite.dump.gz');
  fs.rmSync(dump, { force: true });
  fs.rmSync(`${dump}.partial`, { force: true });
  try {
    const pglite = await openPgliteDb(pgliteDir(dataDir));
    try {
      await writeBackupFile(pglite, dump);
    } finally {
      await pglite.close();
    }
    const header = await readHeader(dump);
    const migrations = migrationsFor(header.migrations, pgliteDir(dataDir));
    const { counts } = await buildServer(
      dataDir,
      async (db) => {
        await migrate(db, migrations);
        return loadBackup(db, dump);
      },
      {
        onLine: (line) => console.error(`storeops: ${line}`),
        beforeMove: (dir) => fs.writeFileSync(path.join(dir, MARKER), `${new Date().toISOString()}\n`),
      },
    );
    const kept = retirePglite();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    return `converted ${describeCounts(counts)} from ${pgliteDir(dataDir)} into the embedded PostgreSQL server in ${server} (${seconds} s); the earlier database is kept in ${kept}: delete it once satisfied`;
  } finally {
    fs.rmSync(dump, { force: true });
  }
}

try {
  if (!fs.existsSync(dataDir)) throw new Error(`${dataDir} does not exist`);
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw new Error(`the service (storeops process ${err.pid}) is running on ${dataDir}: stop it, then convert`);
    throw err;
  }
  try {
    console.log(`storeops: ${await convert()}`);
  } finally {
    release();
  }
} catch (err) {
  console.error(`storeops: migrate-data failed: ${(err as Error).message}`);
  process.exitCode = 1;
}
