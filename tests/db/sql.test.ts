// Statements built from fragments: each fragment's values travel with it and are numbered once, when
// the statement runs; a fragment that writes what a listener acts on wakes it when the change commits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from '../../src/db/sql.ts';
import { testDb } from '../support/world.ts';

const db = await testDb();

test('values of nested fragments are numbered in the order they appear in the whole statement', () => {
  const org = sql`organization_id = ${7}`;
  const locations = sql`location_id = ANY (${[1, 2]}::int[])`;
  const statement = sql`SELECT ${'a'}::text WHERE ${org} AND ${locations} AND ${org}`;
  assert.deepEqual(statement.toQuery(), {
    text: 'SELECT $1::text WHERE organization_id = $2 AND location_id = ANY ($3::int[]) AND organization_id = $4',
    values: ['a', 7, [1, 2], 7],
  });
});

test('raw text, joins and the empty fragment carry no values', () => {
  const columns = sql.join([sql.raw('id'), sql.raw('name'), sql`${3} AS n`]);
  assert.deepEqual(sql`SELECT ${columns}${sql.empty} FROM t`.toQuery(), { text: 'SELECT id, name, $1 AS n FROM t', values: [3] });
  assert.deepEqual(sql.join([]).toQuery(), { text: '', values: [] });
});

test('a statement runs with its values, and a null or a string that looks like SQL is a value, never text', async () => {
  const hostile = "'); DROP TABLE jobs; --";
  const [row] = await db.run<{ a: string; b: null }>(sql`SELECT ${hostile}::text AS a, ${null}::int AS b`);
  assert.deepEqual(row, { a: hostile, b: null });
});

test("a fragment's signals climb to the statement holding it and wake listeners only once the change commits", async () => {
  const queued = sql`SELECT 1 AS one`.wakes('device_outbox');
  const statement = sql`WITH q AS (${queued}) SELECT one FROM q`;
  assert.deepEqual([...statement.signals], ['device_outbox']);
  let woken = 0;
  const off = db.commits.on('device_outbox', () => woken++);
  try {
    await assert.rejects(
      db.tx(async (q) => {
        await q.run(statement);
        throw new Error('rolled back');
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(woken, 0, 'a rolled back change wakes no one');
    await db.statement((q) => q.run(statement));
    for (let i = 0; i < 100 && woken === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(woken, 1);
  } finally {
    off();
  }
});

test('a statement that wakes listeners is refused outside a change, where no commit could wake them', async () => {
  await assert.rejects(db.run(sql`SELECT 1`.wakes('events')), /runs in db.statement\(\) or db.tx\(\)/);
});
