// The dump: every table of the current schema, read in one REPEATABLE READ READ ONLY transaction
// (one snapshot: a change the service commits meanwhile is in the file whole or not at all), and
// written as it is read. A read-only transaction takes no transaction id, so it holds back neither
// the service's writers nor its event readers (events/log.ts waits only for transactions with one).
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Db, Queryable } from '../db.ts';
import { batchLine, FORMAT, headerLine, trailerLine, VERSION, type BackupMigration, type Header, type Trailer } from './format.ts';

/** Rows per FETCH at most. */
const FETCH_ROWS = 1000;
/** About this many bytes of row text per FETCH: a table of large rows (radio audio) is read a few
 * rows at a time, so a batch never holds hundreds of megabytes. */
const FETCH_BYTES = 4 * 1024 * 1024;

/** A quoted identifier. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The tables the backup holds: every table of the schema but the migrations' own record. */
export async function tablesOf(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY tablename",
  );
  return rows.map((r) => r.tablename);
}

/** Each table's columns that own a sequence (serial and identity columns), with the sequence. */
export async function sequencesOf(q: Queryable): Promise<{ table: string; column: string; sequence: string }[]> {
  return q.query(
    `SELECT c.relname AS table, a.attname AS column, pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) AS sequence
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
       AND pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) IS NOT NULL
     ORDER BY 1, 2`,
  );
}

/** The columns of type xid8 (transaction ids: the event log's commit order), by table. */
async function xidColumnsOf(q: Queryable): Promise<Map<string, string[]>> {
  const rows = await q.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, a.attname AS column
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'xid8'::regtype
     ORDER BY 1, 2`,
  );
  const byTable = new Map<string, string[]>();
  for (const r of rows) byTable.set(r.table, [...(byTable.get(r.table) ?? []), r.column]);
  return byTable;
}

export interface Column {
  name: string;
  /** Its SQL type, as a column definition names it. */
  type: string;
  /** json and jsonb are written as their text (see rowsQuery), xid8 as a rank. */
  kind: 'json' | 'xid8' | 'plain';
  generated: boolean;
  identity: boolean;
}

/** A table's columns, in order. */
export async function columnsOf(q: Queryable, table: string): Promise<Column[]> {
  const rows = await q.query<{ name: string; type: string; base: string; generated: boolean; identity: boolean }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type, atttypid::regtype::text AS base,
       attgenerated <> '' AS generated, attidentity <> '' AS identity
     FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    [ident(table)],
  );
  return rows.map((r) => ({ ...r, kind: r.base === 'xid8' ? 'xid8' : r.base === 'json' || r.base === 'jsonb' ? 'json' : 'plain' }));
}

/**
 * The SELECT of a table's rows as JSON text.
 * - json and jsonb values are written as strings of their text: row_to_json writes a JSON null
 *   held in a column as it writes an SQL NULL, and a NOT NULL column could not be loaded back.
 * - A transaction id names a transaction of this server only, and the service compares them (an
 *   event reader's cursor, events in commit order), so each is written as its rank among all those
 *   the snapshot holds, plus 2 (0 to 2 are PostgreSQL's special ids and stay as they are): the
 *   order is kept, and the numbers are small enough for the server a backup is loaded into to have
 *   passed them (load.ts makes sure it has).
 */
async function rowsQuery(q: Queryable, table: string, xids: Map<string, string[]>): Promise<string> {
  const columns = await columnsOf(q, table);
  const own = xids.get(table) ?? [];
  const select = columns.map(({ name, kind }) => {
    const c = `t.${ident(name)}`;
    if (kind === 'json') return `${c}::text AS ${ident(name)}`;
    if (kind === 'xid8') return `CASE WHEN ${c} < '3' THEN ${c} ELSE (r${own.indexOf(name)}.rank + 2)::text::xid8 END AS ${ident(name)}`;
    return c;
  });
  const joins = own.map((c, i) => `LEFT JOIN ranks r${i} ON r${i}.v = t.${ident(c)}`).join(' ');
  const all = [...xids].flatMap(([t, names]) => names.map((c) => `SELECT ${ident(c)} AS v FROM ${ident(t)}`));
  const ranks = own.length === 0 ? '' : `WITH ranks AS (SELECT v, dense_rank() OVER (ORDER BY v) AS rank FROM (${all.join(' UNION ')}) s WHERE v >= '3') `;
  // ONLY: a partitioned table's rows are read from its partitions, once.
  return `${ranks}SELECT row_to_json(x)::text AS r FROM (SELECT ${select.join(', ')} FROM ONLY ${ident(table)} t ${joins}) x`;
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** Writes the whole database to `out` (uncompressed lines); returns the rows of each table. */
export async function dumpTo(db: Pick<Db, 'tx'>, out: Writable): Promise<Record<string, number>> {
  return db.tx(async (q) => {
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The text forms that parse back to the same value, whatever the server's settings.
    await q.query("SET LOCAL bytea_output = 'hex'");
    await q.query('SET LOCAL extra_float_digits = 3');
    // The service's 15 s bound is for requests; ranking a large event log's ids may take longer.
    await q.query('SET LOCAL statement_timeout = 0');
    const [found] = await q.query<{ ok: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS ok");
    if (found?.ok !== true) throw new Error('the database has no schema_migrations table: it is not a storeops database, or no service ever started on it');
    const migrations = await q.query<BackupMigration>('SELECT version, name FROM schema_migrations ORDER BY version');
    const tables = await tablesOf(q);
    const xids = await xidColumnsOf(q);
    const header: Header = { format: FORMAT, version: VERSION, made_at: new Date().toISOString(), migrations, tables };
    await write(out, headerLine(header));
    const counts: Record<string, number> = {};
    for (const table of tables) {
      counts[table] = 0;
      await q.query(`DECLARE backup_rows NO SCROLL CURSOR FOR ${await rowsQuery(q, table, xids)}`);
      let size = 16;
      for (;;) {
        const rows = await q.query<{ r: string }>(`FETCH ${size} FROM backup_rows`);
        if (rows.length === 0) break;
        const texts = rows.map((row) => row.r);
        counts[table] += texts.length;
        await write(out, batchLine(table, texts));
        const bytes = texts.reduce((n, t) => n + t.length, 0);
        size = Math.max(1, Math.min(FETCH_ROWS, Math.floor((FETCH_BYTES * texts.length) / Math.max(bytes, 1))));
      }
      await q.query('CLOSE backup_rows');
    }
    // Read last: a sequence is not part of the snapshot, and a later value is only higher.
    const sequences: Trailer['sequences'] = {};
    for (const s of await sequencesOf(q)) {
      const [state] = await q.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${s.sequence}`);
      if (state?.is_called) (sequences[s.table] ??= {})[s.column] = state.last_value;
    }
    await write(out, trailerLine({ end: true, counts, sequences }));
    return counts;
  });
}

/**
 * Writes a backup of `db` to `file`, atomically: to FILE.partial, flushed to disk, then linked to
 * FILE (which fails if FILE appeared meanwhile: nothing is ever overwritten). Returns the counts
 * and the file's size.
 */
export async function writeBackupFile(db: Pick<Db, 'tx'>, file: string): Promise<{ counts: Record<string, number>; bytes: number }> {
  if (fs.existsSync(file)) throw new Error(`${file} already exists: choose another name (a backup never overwrites a file)`);
  const partial = `${file}.partial`;
  try {
    fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new Error(`${partial} exists: another backup is writing it, or an interrupted one left it; remove it and run again`);
    throw new Error(`cannot write ${partial}: ${code ?? (err as Error).message}`);
  }
  let linked = false;
  try {
    const gzip = zlib.createGzip({ level: 6 });
    // A failed write (a full disk) destroys the gzip stream too, so the dump's wait for 'drain'
    // ends with the error and its transaction rolls back.
    const written = pipeline(gzip, fs.createWriteStream(partial, { flags: 'r+' }));
    let counts: Record<string, number>;
    try {
      counts = await dumpTo(db, gzip);
      gzip.end();
    } catch (err) {
      gzip.destroy();
      await written.catch(() => {});
      throw err;
    }
    await written;
    const fd = fs.openSync(partial, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(partial, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${file} appeared while the backup was written: the backup was left in ${partial}`);
      throw err;
    }
    linked = true;
    fs.rmSync(partial);
    syncDir(path.dirname(file));
    return { counts, bytes: fs.statSync(file).size };
  } finally {
    if (!linked && !fs.existsSync(file)) fs.rmSync(partial, { force: true });
  }
}

/** Makes a rename or a new name in `dir` durable. */
export function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
