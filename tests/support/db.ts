// The test processes' databases: one per process, migrated (PGlite, or a schema of its own on
// TEST_DATABASE_URL), and fresh unmigrated ones for the migration tests.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDb, type Db } from '../../src/db/db.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { closeAtEnd, closeDatabaseAtEnd, closeWith, type Teardown } from './teardown.ts';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

let shared: Promise<Db> | null = null;

/** The process's test database, migrated; closed when the test file ends. */
export function testDb(): Promise<Db> {
  if (shared === null) {
    const opened = openTestDb();
    shared = opened;
    closeDatabaseAtEnd(async () => (await opened).close());
  }
  return shared;
}

async function openTestDb(): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const db = await openPgliteCopy('migrated');
    await migrate(db); // nothing to apply: the template is of these migrations
    return db;
  }
  // Test files run in parallel processes: each gets a schema of its own, so one file's
  // scheduler never picks another file's jobs.
  const schema = `storeops_test_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(url, `CREATE SCHEMA ${schema}`);
  const db = await openDb({ kind: 'postgres', url, poolSize: 20, schema });
  await migrate(db);
  return dropOnClose(db, url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/**
 * The process's database as a second instance of the service sees it: on PostgreSQL another pool
 * on the same schema (commits reach it through NOTIFY, as between instances), closed at the file's
 * end; on PGlite, which one process owns, the same handle.
 */
export async function otherInstanceDb(): Promise<Db> {
  const db = await testDb();
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return db;
  const [row] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  const other = await openDb({ kind: 'postgres', url, schema: row?.schema ?? 'public', poolSize: 5 });
  closeAtEnd(() => other.close());
  return other;
}

/** A fresh database of its own (for migration tests), unmigrated; closed with the test `t` when
 * given, else the caller closes it. */
export async function freshDb(opts: { t?: Teardown } = {}): Promise<Db> {
  const db = await openFreshDb();
  if (opts.t !== undefined) closeWith(opts.t, () => db.close());
  return db;
}

async function openFreshDb(): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return openPgliteCopy('empty');
  const name = `storeops_t_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(url, `CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return dropOnClose(await openDb({ kind: 'postgres', url: u.toString() }), url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const admin = await openDb({ kind: 'postgres', url });
  try {
    await admin.query(sql);
  } finally {
    await admin.close();
  }
}

/** The database handle, whose close also drops what the test made for it. */
function dropOnClose(db: Db, url: string, dropSql: string): Db {
  return afterClose(db, () => adminQuery(url, dropSql));
}

function afterClose(db: Db, then: () => Promise<void> | void): Db {
  const close = db.close.bind(db);
  return {
    ...db,
    close: async () => {
      await close();
      await then();
    },
  };
}

// --- PGlite from a template ---
// Creating a PGlite database (and migrating it) costs a test process about 1.5 s of CPU, more than
// most test files take. The first process to need one makes a data directory, a template named by
// the PGlite version (and the migrations, when migrated); every process copies it (about 0.2 s)
// and opens its copy, which it deletes when it closes.

const TMP = os.tmpdir();
const LEFTOVER = /^storeops-test-(template|db)-/;
/** No test process runs this long, and a template nobody copied for this long is an old one. */
const UNUSED_MS = 60 * 60 * 1000;

async function openPgliteCopy(kind: 'migrated' | 'empty'): Promise<Db> {
  const key = templateKey(kind);
  removeLeftovers(key);
  const dir = fs.mkdtempSync(path.join(TMP, `storeops-test-db-${process.pid}-`));
  try {
    copyTemplate(await pgliteTemplate(key), dir);
  } catch (err) {
    // Removed under us as unused by another process's tidying: make it again.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    copyTemplate(await pgliteTemplate(key), dir);
  }
  const db = await openDb({ kind: 'pglite', dataDir: dir });
  return afterClose(db, () => fs.rmSync(dir, { recursive: true, force: true }));
}

function copyTemplate(template: string, dir: string): void {
  const now = new Date();
  fs.utimesSync(template, now, now); // in use: not to be tidied away
  fs.cpSync(template, dir, { recursive: true });
}

/** The template's directory, made now when it is missing. Processes that start together may
 * each make one: the first rename wins and the others drop theirs. */
async function pgliteTemplate(key: string): Promise<string> {
  const template = path.join(TMP, `storeops-test-template-${key}`);
  if (fs.existsSync(template)) return template;
  const building = fs.mkdtempSync(`${template}.building-`);
  try {
    const db = await openDb({ kind: 'pglite', dataDir: building });
    if (key.startsWith('migrated-')) await migrate(db);
    await db.close();
    fs.renameSync(building, template);
  } catch (err) {
    fs.rmSync(building, { recursive: true, force: true });
    if (!fs.existsSync(template)) throw err;
  }
  return template;
}

function templateKey(kind: 'migrated' | 'empty'): string {
  const hash = crypto.createHash('sha256');
  hash.update(pgliteVersion());
  if (kind === 'migrated') for (const m of readMigrations()) hash.update(`\0${m.version}\0${m.name}\0${m.sql}`);
  return `${kind}-${hash.digest('hex').slice(0, 16)}`;
}

function pgliteVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite') return pkg.version ?? '';
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '';
    dir = parent;
  }
}

/** What killed test processes and old migrations left behind (each ~40 MB): copies, and templates
 * (or half-built ones) other than the one in use, that nobody has touched for an hour. */
function removeLeftovers(inUse: string): void {
  for (const name of fs.readdirSync(TMP)) {
    if (!LEFTOVER.test(name) || name === `storeops-test-template-${inUse}`) continue;
    const full = path.join(TMP, name);
    try {
      if (Date.now() - fs.statSync(full).mtimeMs > UNUSED_MS) fs.rmSync(full, { recursive: true, force: true });
    } catch {
      // Another process tidied it first.
    }
  }
}
