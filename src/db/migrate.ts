// Numbered plain-SQL migrations, applied in order at start. A migration that instances of an
// earlier release cannot run beside (it drops or changes what they read) starts with the line
// `-- storeops: stop earlier releases first`: it is applied only while no session of another
// release is connected to the database, else the start stops and says which are.
import fs from 'node:fs';
import path from 'node:path';
import { APPLICATION_NAME } from '../version.ts';
import type { Db, Tx } from './db.ts';
import { DatabaseStartError } from './start-error.ts';

const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');
// Any fixed number: instances that start together queue on it instead of racing.
const MIGRATION_LOCK = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const EXCLUSIVE = /^-- storeops: stop earlier releases first\s*$/m;

/** An upgrade that must wait for the instances of an earlier release to stop. */
export class MigrationBlockedError extends DatabaseStartError {}

async function refuseBesideOtherReleases(q: Tx, m: Migration): Promise<void> {
  const others = await q.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name LIKE 'storeops %' AND application_name <> $1
     GROUP BY application_name ORDER BY application_name`,
    [APPLICATION_NAME],
  );
  if (others.length === 0) return;
  const who = others.map((o) => `${o.name} (${o.n} connection${o.n === 1 ? '' : 's'})`).join(', ');
  throw new MigrationBlockedError(
    `migration ${String(m.version).padStart(3, '0')}_${m.name} cannot run beside instances of another release, and ${who} ${others.length === 1 ? 'is' : 'are'} connected: ` +
      'stop every instance of the earlier release, then start this one again (nothing was applied)',
  );
}

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/** Applies every migration not applied yet; returns the names of those it applied. */
export async function migrate(db: Db, migrations: Migration[] = readMigrations()): Promise<string[]> {
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await q.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      if (EXCLUSIVE.test(m.sql)) await refuseBesideOtherReleases(q, m);
      await q.query(m.sql);
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(`${String(m.version).padStart(3, '0')}_${m.name}`);
    }
    return applied;
  });
}
