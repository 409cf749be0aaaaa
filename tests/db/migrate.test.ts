import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { migrate, MigrationBlockedError, readMigrations } from '../../src/db/migrate.ts';
import { APPLICATION_NAME } from '../../src/version.ts';
import { freshDb, testDatabaseUrl } from '../support/world.ts';

test('every migration applies to an empty database, and a second run applies nothing', async () => {
  const db = await freshDb();
  try {
    const applied = await migrate(db);
    assert.deepEqual(
      applied,
      readMigrations().map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`),
    );
    assert.deepEqual(await migrate(db), []);
    const tables = await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
    const names = tables.map((t) => t.table_name);
    for (const t of [
      'organizations',
      'locations',
      'lockers',
      'cabinets',
      'cfh_options',
      'radio_edges',
      'messaging_accounts',
      'api_tokens',
      'jobs',
      'device_outbox',
    ]) {
      assert.ok(names.includes(t), `table ${t} exists`);
    }
  } finally {
    await db.close();
  }
});

test('instances that migrate at the same time apply each migration once', async () => {
  const db = await freshDb();
  try {
    const results = await Promise.all([migrate(db), migrate(db), migrate(db)]);
    const total = results.reduce((n, r) => n + r.length, 0);
    assert.equal(total, readMigrations().length);
  } finally {
    await db.close();
  }
});

test('timestamps come back in the wire format with six fractional digits', async () => {
  const db = await freshDb();
  try {
    const [row] = await db.query<{ a: string; b: string; c: string }>(
      "SELECT '2026-01-15 09:00:00.123456+00'::timestamptz AS a, '2026-01-15 10:00:00+01'::timestamptz AS b, $1::timestamptz AS c",
      [new Date('2026-03-01T12:34:56.789Z')],
    );
    assert.equal(row?.a, '2026-01-15T09:00:00.123456Z');
    assert.equal(row?.b, '2026-01-15T09:00:00.000000Z');
    assert.equal(row?.c, '2026-03-01T12:34:56.789000Z');
  } finally {
    await db.close();
  }
});

test('a migration marked to stop earlier releases first waits for them: refused while one is connected, applied once it is gone', async (t) => {
  const db = await freshDb({ t });
  await migrate(db);
  const [{ name }] = (await db.query<{ name: string }>('SELECT current_database() AS name')) as [{ name: string }];
  const url = new URL(await testDatabaseUrl());
  url.pathname = `/${name}`;
  const older = new pg.Client({ connectionString: url.toString(), application_name: 'storeops 0.9.0' });
  await older.connect();
  const next = Math.max(...readMigrations().map((m) => m.version)) + 1;
  const exclusive = {
    version: next,
    name: 'drop_what_old_instances_read',
    sql: '-- storeops: stop earlier releases first\nCREATE TABLE next_release_marker (id int)',
  };
  const beside = { version: next + 1, name: 'additive', sql: 'CREATE TABLE additive_marker (id int)' };
  try {
    await assert.rejects(migrate(db, [...readMigrations(), exclusive, beside]), (err: unknown) => {
      assert.ok(err instanceof MigrationBlockedError);
      assert.match(
        err.message,
        new RegExp(
          `migration ${String(next).padStart(3, '0')}_drop_what_old_instances_read cannot run beside instances of another release, and storeops 0\\.9\\.0 \\(1 connection\\) is connected: stop every instance`,
        ),
      );
      return true;
    });
    assert.equal((await db.query("SELECT to_regclass('additive_marker') AS t"))[0]?.t, null, 'nothing of the upgrade was applied');
  } finally {
    await older.end();
  }
  assert.ok(APPLICATION_NAME.startsWith('storeops '), "this release's sessions name themselves");
  assert.deepEqual(await migrate(db, [...readMigrations(), exclusive, beside]), [
    `${String(next).padStart(3, '0')}_drop_what_old_instances_read`,
    `${String(next + 1).padStart(3, '0')}_additive`,
  ]);
});
