// The load: a backup's rows into a database that has exactly the backup's migrations applied and
// nothing else written (a new server's: restore.ts, migrate-data.ts), in one transaction, so a
// load that fails leaves no row behind.
import type { Db, Queryable } from '../db.ts';
import { columnsOf, ident, sequencesOf, tablesOf } from './dump.ts';
import { readMigrations, type Migration } from '../migrate.ts';
import { BackupFileError, readBackup, type BackupMigration, type Header, type Trailer } from './format.ts';

/** The backup does not fit the database it is loaded into: one line for the operator. */
export class LoadError extends Error {}

/** Transaction ids burnt per statement while the server is moved past the backup's (see below). */
const XIDS_PER_STATEMENT = 50_000;

/** This release's migrations that made the backup's schema; refused when it has one this release lacks. */
export function migrationsFor(wanted: readonly BackupMigration[], source: string): Migration[] {
  const known = new Map(readMigrations().map((m) => [m.version, m]));
  for (const m of wanted) {
    const here = known.get(m.version);
    if (here === undefined) {
      throw new LoadError(
        `${source} was made by a newer release of storeops (its migration ${String(m.version).padStart(3, '0')}_${m.name} is unknown to this one): use that release or a later one`,
      );
    }
    if (here.name !== m.name)
      throw new LoadError(`${source} has migration ${m.version} as ${m.name}, and this release as ${here.name}: it was not made by a release of this storeops`);
  }
  const versions = new Set(wanted.map((m) => m.version));
  return [...known.values()].filter((m) => versions.has(m.version));
}

interface TableLoad {
  insert: string;
}

async function checkMigrations(q: Queryable, file: string, header: Header): Promise<void> {
  const here = await q.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  const key = (m: { version: number; name: string }) => `${String(m.version).padStart(3, '0')}_${m.name}`;
  const want = header.migrations.map(key).join(',');
  if (here.map(key).join(',') !== want) {
    throw new LoadError(`${file} was made at migrations ${want || 'none'}, and the database it is loaded into has ${here.map(key).join(',') || 'none'}`);
  }
}

/**
 * The INSERT of a table's batches: every column but generated ones, identity values as given. The
 * rows are read with the table's own types, but json and jsonb as text (dump.ts writes their text).
 */
async function tableLoad(q: Queryable, table: string): Promise<TableLoad> {
  const columns = (await columnsOf(q, table)).filter((c) => !c.generated);
  const list = columns.map((c) => ident(c.name)).join(', ');
  const values = columns.map((c) => (c.kind === 'json' ? `${ident(c.name)}::${c.type}` : ident(c.name))).join(', ');
  const types = columns.map((c) => `${ident(c.name)} ${c.kind === 'json' ? 'text' : c.type}`).join(', ');
  const overriding = columns.some((c) => c.identity) ? ' OVERRIDING SYSTEM VALUE' : '';
  return { insert: `INSERT INTO ${ident(table)} (${list})${overriding} SELECT ${values} FROM json_to_recordset($1::json) AS x(${types})` };
}

/** Each sequence continues after the backup's last value (or its column's largest), else starts anew. */
async function setSequences(q: Queryable, trailer: Trailer): Promise<void> {
  for (const s of await sequencesOf(q)) {
    const used = trailer.sequences[s.table]?.[s.column] ?? null;
    await q.query(
      `SELECT CASE WHEN v IS NULL THEN setval($1::regclass, (SELECT seqstart FROM pg_sequence WHERE seqrelid = $1::regclass), false)
                   ELSE setval($1::regclass, v, true) END
       FROM (SELECT greatest($2::bigint, (SELECT max(${ident(s.column)})::bigint FROM ${ident(s.table)})) AS v) AS x`,
      [s.sequence, used],
    );
  }
}

async function checkCounts(q: Queryable, file: string, tables: string[], trailer: Trailer): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await q.query<{ n: number }>(`SELECT count(*) AS n FROM ONLY ${ident(table)}`);
    counts[table] = row?.n ?? 0;
    const expected = trailer.counts[table];
    if (expected !== counts[table]) {
      throw new BackupFileError(`${file}: ${table} has ${String(expected ?? 'no')} rows by its end line and ${counts[table]} were loaded: the file is damaged`);
    }
  }
  return counts;
}

/** The largest transaction id the loaded rows hold (dump.ts numbered them from 3), or 0. */
async function largestXid(q: Queryable): Promise<bigint> {
  const columns = await q.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, a.attname AS column
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'xid8'::regtype`,
  );
  if (columns.length === 0) return 0n;
  const [row] = await q.query<{ v: string | null }>(
    `SELECT max(v)::text AS v FROM (${columns.map((c) => `SELECT max(${ident(c.column)}) AS v FROM ${ident(c.table)}`).join(' UNION ALL ')}) s`,
  );
  return BigInt(row?.v ?? '0');
}

/**
 * Moves the server's transaction ids past `past`: the loaded ids must be older than every
 * transaction from now on, or the service's event readers would wait for them forever and skip
 * what is written after. A new server has used a few hundred; a backup of a busy log holds one
 * per transaction that wrote events, so this burns them, many per statement, without a disk flush
 * for each (synchronous_commit off: losing them in a crash loses nothing).
 */
async function advanceTransactionIds(db: Pick<Db, 'query'>, past: bigint): Promise<void> {
  for (;;) {
    const [row] = await db.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x');
    const now = BigInt(row?.x ?? '0');
    if (now > past) return;
    const n = past - now < BigInt(XIDS_PER_STATEMENT) ? Number(past - now) + 1 : XIDS_PER_STATEMENT;
    await db.query(`DO $$ BEGIN FOR i IN 1..${n} LOOP
      PERFORM set_config('synchronous_commit', 'off', true); PERFORM pg_current_xact_id(); COMMIT;
    END LOOP; END $$`);
  }
}

/**
 * Loads `file` into `db`, which has exactly the backup's migrations applied and no other writes:
 * every table's rows are replaced by the backup's (a migration may have written some, as 008 does
 * the webhooks' event cursor), foreign keys are not checked row by row (the backup was one
 * consistent snapshot), each table's count is checked against the file's end line, and the
 * sequences go on from where the backed-up database's were. Returns the rows of each table.
 */
export async function loadBackup(db: Db, file: string): Promise<{ header: Header; counts: Record<string, number> }> {
  const result = await db.tx(async (q) => {
    // Replica: no triggers, so no foreign-key checks either (the embedded server's user is a superuser).
    await q.query('SET LOCAL session_replication_role = replica');
    await q.query('SET LOCAL statement_timeout = 0'); // the service's 15 s bound is for requests
    let header: Header | null = null;
    let trailer: Trailer | null = null;
    const loads = new Map<string, TableLoad>();
    for await (const entry of readBackup(file)) {
      if (entry.kind === 'header') {
        header = entry.header;
        await checkMigrations(q, file, header);
        const here = await tablesOf(q);
        if ([...here].sort().join(',') !== [...header.tables].sort().join(',')) {
          throw new LoadError(`${file} holds the tables ${header.tables.join(', ')}, and the database it is loaded into has ${here.join(', ')}`);
        }
        for (const table of here) loads.set(table, await tableLoad(q, table));
        if (here.length > 0) await q.query(`TRUNCATE ${here.map(ident).join(', ')}`);
      } else if (entry.kind === 'batch') {
        await q.query((loads.get(entry.table) as TableLoad).insert, [entry.rows]);
      } else {
        trailer = entry.trailer;
      }
    }
    // readBackup has thrown unless the file is whole: a header, and an end line last.
    const counts = await checkCounts(q, file, [...loads.keys()], trailer as Trailer);
    await setSequences(q, trailer as Trailer);
    return { header: header as Header, counts, xid: await largestXid(q) };
  });
  await advanceTransactionIds(db, result.xid);
  return { header: result.header, counts: result.counts };
}
