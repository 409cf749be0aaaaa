// The logical backup (src/db/backup): a dump loaded into a fresh database with the same migrations
// gives every row back exactly, whatever its types; a damaged file loads nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { writeBackupFile } from '../../src/db/backup/dump.ts';
import { BackupFileError } from '../../src/db/backup/format.ts';
import { loadBackup, LoadError } from '../../src/db/backup/load.ts';
import { migrate, type Migration } from '../../src/db/migrate.ts';
import { freshDb, type Teardown } from '../support/world.ts';

const SCHEMA: Migration[] = [
  {
    version: 1,
    name: 'kinds',
    sql: `
    CREATE TABLE kinds (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      audio bytea, doc jsonb, plain json, at timestamptz, day date, span interval,
      tags text[], nums integer[], grid integer[][], amount numeric, big bigint, ratio double precision,
      note text, uid uuid, flag boolean,
      -- JSON's null, in a column that refuses SQL's NULL.
      meta jsonb NOT NULL DEFAULT 'null',
      doubled numeric GENERATED ALWAYS AS (amount * 2) STORED
    );
    CREATE TABLE parents (id serial PRIMARY KEY, name text NOT NULL);
    -- Loaded before parents (tables are loaded by name): the foreign key is not checked row by row.
    CREATE TABLE children (id serial PRIMARY KEY, parent_id integer NOT NULL REFERENCES parents (id), note text);
    -- An event log's commit order, and a reader's place in it (as events and event_cursors).
    CREATE TABLE log (id bigserial PRIMARY KEY, tx xid8 NOT NULL DEFAULT pg_current_xact_id());
    CREATE TABLE readers (name text PRIMARY KEY, tx xid8 NOT NULL, id bigint NOT NULL);
  `,
  },
];

function tempFile(t: Teardown, name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-backup-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

async function schemaDb(t: Teardown): Promise<Db> {
  const db = await freshDb({ t });
  await migrate(db, SCHEMA);
  return db;
}

/** Every row of `table` in PostgreSQL's own text form (not JSON: the comparison must not share the backup's way). */
async function rowsOf(db: Db, table: string): Promise<string[]> {
  return (await db.query<{ r: string }>(`SELECT t::text AS r FROM ${table} t ORDER BY 1`)).map((row) => row.r);
}

/** The same rows, told apart in a few hundred characters (a row holds 300 kB of audio). */
function assertSameRows(actual: string[], expected: string[], table: string): void {
  const cut = (row: string | undefined) => (row === undefined ? 'none' : row.length > 300 ? `${row.slice(0, 300)}... (${row.length} characters)` : row);
  assert.equal(actual.length, expected.length, `${table}: rows`);
  actual.forEach((row, i) => assert.ok(row === expected[i], `${table} row ${i}:\n  loaded   ${cut(row)}\n  backed up ${cut(expected[i])}`));
}

const SAMPLE = `INSERT INTO kinds (audio, doc, plain, at, day, span, tags, nums, grid, amount, big, ratio, note, uid, flag) VALUES
  ($1, $2::jsonb, $3::json, '2026-01-15 09:00:00.123456+00', '2028-02-29', '1 year 2 mons 3 days 04:05:06.789',
   ARRAY['plain', 'with "quotes", commas {braces} \\ backslash', NULL, '', 'été ☕ 😀'], ARRAY[1, NULL, -3], '{{1,2},{3,4}}',
   12345678901234567890.123456789012345678, 9223372036854775807, 0.1, $4, 'c0a80101-0000-4000-8000-000000000001', true),
  (NULL, '"a string"', '[1, 2.50, 1e400]', 'infinity', NULL, NULL, '{}', NULL, NULL, 'NaN', -9223372036854775808, 'Infinity', '', NULL, false),
  (NULL, 'null', NULL, '1999-12-31 23:59:59.999999-05:30', NULL, NULL, NULL, '{}', NULL, 0.000000000000000000001, 0, 5e-324, NULL, NULL, NULL)`;

test('a dump loaded into a fresh database gives every row back exactly, whatever its types', async (t) => {
  const source = await schemaDb(t);
  const audio = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.alloc(300_000, 0xa5)]);
  const doc = JSON.stringify({ text: 'línea\n"two"\t\\ 😀 \u0001', big: '12345678901234567890.123456789', nested: [{ a: null }, [], {}] });
  const plain = '{"kept": "as written",  "twice": 1, "twice": 2}';
  const note = 'Ünïcödé: 日本語, עברית, 👩‍👩‍👧 (a family), e\u0301 (combining), \u2028 line separator, "quoted" \\ and a tab\t';
  await source.query(SAMPLE, [audio, doc, plain, note]);
  await source.query("INSERT INTO parents (name) SELECT 'parent ' || i FROM generate_series(1, 5) AS i");
  await source.query('DELETE FROM parents WHERE id > 3'); // the sequence is past the largest id
  await source.query("INSERT INTO children (parent_id, note) SELECT 1 + i % 3, repeat('x', i) FROM generate_series(1, 2500) AS i");

  const file = tempFile(t, 'kinds.backup.gz');
  const { counts } = await writeBackupFile(source, file);
  assert.deepEqual(counts, { children: 2500, kinds: 3, log: 0, parents: 3, readers: 0 });
  assert.ok(!fs.existsSync(`${file}.partial`));

  const target = await schemaDb(t);
  const loaded = await loadBackup(target, file);
  assert.deepEqual(loaded.counts, counts);
  for (const table of ['kinds', 'parents', 'children']) assertSameRows(await rowsOf(target, table), await rowsOf(source, table), table);
  const [bytes] = await target.query<{ audio: Buffer }>('SELECT audio FROM kinds WHERE audio IS NOT NULL');
  assert.ok(bytes?.audio.equals(audio), 'the bytea comes back byte for byte');

  // Sequences go on after the backed-up database's, never handing out an id it already did.
  const [parent] = await target.query<{ id: number }>("INSERT INTO parents (name) VALUES ('new') RETURNING id");
  assert.equal(parent?.id, 6);
  const [kind] = await target.query<{ id: number }>('INSERT INTO kinds (note) VALUES (null) RETURNING id');
  assert.equal(kind?.id, 4);
  const [log] = await target.query<{ id: number }>('INSERT INTO log DEFAULT VALUES RETURNING id');
  assert.equal(log?.id, 1, 'a sequence never used starts at its start');
});

test("transaction ids keep their order against a reader's place, and are older than every transaction after the load", async (t) => {
  const source = await schemaDb(t);
  for (let i = 0; i < 6; i++) await source.query('INSERT INTO log DEFAULT VALUES');
  await source.tx(async (q) => {
    await q.query('INSERT INTO log DEFAULT VALUES');
    await q.query('INSERT INTO log DEFAULT VALUES');
  });
  await source.query("INSERT INTO readers (name, tx, id) SELECT 'at three', tx, id FROM log WHERE id = 3");
  await source.query("INSERT INTO readers (name, tx, id) VALUES ('at the start', '0', 0)");
  const file = tempFile(t, 'log.backup.gz');
  await writeBackupFile(source, file);

  const target = await schemaDb(t);
  await loadBackup(target, file);
  const after = async (db: Db, reader: string) =>
    (await db.query<{ id: number }>('SELECT l.id FROM log l, readers r WHERE r.name = $1 AND (l.tx, l.id) > (r.tx, r.id) ORDER BY l.tx, l.id', [reader])).map(
      (r) => r.id,
    );
  assert.deepEqual(await after(target, 'at three'), [4, 5, 6, 7, 8]);
  assert.deepEqual(await after(target, 'at three'), await after(source, 'at three'));
  assert.deepEqual(await after(target, 'at the start'), [1, 2, 3, 4, 5, 6, 7, 8]);
  const [pair] = await target.query<{ same: boolean }>('SELECT (SELECT tx FROM log WHERE id = 7) = (SELECT tx FROM log WHERE id = 8) AS same');
  assert.equal(pair?.same, true, 'the rows of one transaction keep one id');
  const [range] = await target.query<{ min: string; max: string }>('SELECT min(tx)::text AS min, max(tx)::text AS max FROM log');
  assert.deepEqual(range, { min: '3', max: '9' }, 'numbered from 3 by their order (7 transactions): small enough for a new server to have passed them');
  const [past] = await target.query<{ older: boolean }>('SELECT max(tx) < pg_snapshot_xmin(pg_current_snapshot()) AS older FROM log');
  assert.equal(past?.older, true);
  await target.query('INSERT INTO log DEFAULT VALUES');
  assert.deepEqual(await after(target, 'at three'), [4, 5, 6, 7, 8, 9], "a row written after the load comes after the reader's place");
});

test('a backup cut short, or made at other migrations, loads nothing', async (t) => {
  const source = await schemaDb(t);
  await source.query("INSERT INTO parents (name) SELECT 'p' || i FROM generate_series(1, 3000) AS i");
  const file = tempFile(t, 'whole.backup.gz');
  await writeBackupFile(source, file);
  const lines = zlib.gunzipSync(fs.readFileSync(file)).toString().split('\n');

  const target = await schemaDb(t);
  const noEnd = tempFile(t, 'no-end.backup.gz');
  fs.writeFileSync(noEnd, zlib.gzipSync(lines.slice(0, -2).join('\n')));
  await assert.rejects(loadBackup(target, noEnd), (err: Error) => err instanceof BackupFileError && /cut short \(it has no end line/.test(err.message));
  const cut = tempFile(t, 'cut.backup.gz');
  fs.writeFileSync(cut, fs.readFileSync(file).subarray(0, 2000));
  await assert.rejects(
    loadBackup(target, cut),
    (err: Error) => err instanceof BackupFileError && /cut short \(its compressed data ends early\)/.test(err.message),
  );
  const miscounted = tempFile(t, 'miscounted.backup.gz');
  fs.writeFileSync(miscounted, zlib.gzipSync(lines.join('\n').replace('"parents":3000', '"parents":3001')));
  await assert.rejects(loadBackup(target, miscounted), /parents has 3001 rows by its end line and 3000 were loaded/);
  assert.deepEqual(await target.query('SELECT * FROM parents'), [], 'nothing stays of a failed load');

  const other = await freshDb({ t });
  await migrate(other, [...SCHEMA, { version: 2, name: 'more', sql: 'CREATE TABLE more (id int)' }]);
  await assert.rejects(
    loadBackup(other, file),
    (err: Error) => err instanceof LoadError && /made at migrations 001_kinds, and the database it is loaded into has 001_kinds,002_more/.test(err.message),
  );
});

test('a backup never overwrites a file, and a failed one leaves none', async (t) => {
  const source = await schemaDb(t);
  const file = tempFile(t, 'taken.backup.gz');
  fs.writeFileSync(file, 'precious');
  await assert.rejects(writeBackupFile(source, file), /already exists/);
  assert.equal(fs.readFileSync(file, 'utf8'), 'precious');

  const never = await freshDb({ t });
  const failed = tempFile(t, 'failed.backup.gz');
  await assert.rejects(
    writeBackupFile(never, failed),
    /^Error: the database has no schema_migrations table: it is not a storeops database, or no service ever started on it$/,
  );
  assert.deepEqual(fs.readdirSync(path.dirname(failed)), []);
});
