// Parameterized statements are prepared once per connection (the database handle names them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDb } from '../support/world.ts';

test('a prepared statement gives the same answers on every call, in and out of transactions', async () => {
  const db = await testDb();
  const sql = 'SELECT $1::int * 2 AS doubled';
  for (let i = 0; i < 12; i++) {
    const [row] = await db.query<{ doubled: number }>(sql, [i]);
    assert.equal(row?.doubled, i * 2);
  }
  const [inTx, prepared] = await db.tx(async (q) => [
    (await q.query<{ doubled: number }>(sql, [21]))[0]?.doubled,
    (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [sql]))[0]?.n,
  ]);
  assert.equal(inTx, 42);
  assert.equal(prepared, 1, 'the connection holds the statement prepared');
});

test('a statement that fails once is prepared again and runs on the next call', async () => {
  const db = await testDb();
  // The failure aborts the transaction before the statement is parsed; the next call must not
  // take it for prepared.
  const sql = 'SELECT count(*)::int AS n FROM (VALUES ($1::int)) v(x)';
  await assert.rejects(
    db.tx(async (q) => {
      await q.query('SELECT 1/$1::int', [0]).catch(() => {});
      await q.query(sql, [1]);
    }),
    /aborted/,
  );
  const [row] = await db.query<{ n: number }>(sql, [1]);
  assert.equal(row?.n, 1);
});

test('SQL built at run time keeps running past the number of statements a handle prepares', async () => {
  const db = await testDb();
  for (let i = 0; i < 520; i++) {
    const [row] = await db.query<{ v: number }>(`SELECT $1::int + ${i} AS v`, [1]);
    assert.equal(row?.v, i + 1);
  }
});
