import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { freshDb } from '../support/world.ts';

test('every migration applies to an empty database, and a second run applies nothing', async () => {
  const db = await freshDb();
  try {
    const applied = await migrate(db);
    assert.deepEqual(applied, readMigrations().map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`));
    assert.deepEqual(await migrate(db), []);
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    const names = tables.map((t) => t.table_name);
    for (const t of ['organizations', 'locations', 'lockers', 'cabinets', 'cfh_options', 'radio_edges', 'messaging_accounts', 'api_tokens', 'jobs', 'device_outbox']) {
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
