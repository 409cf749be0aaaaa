// The database handle when the server drops a connection in the middle of a transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDb } from '../../src/db/db.ts';
import { isDatabaseUnavailable } from '../../src/db/errors.ts';

test('a transaction whose connection the server ends rejects as "unavailable", and the handle keeps working', async () => {
  const url = process.env.TEST_DATABASE_URL as string;
  const db = await openDb({ url, poolSize: 2 });
  const admin = await openDb({ url, poolSize: 1 });
  try {
    const tx = db.tx(async (q) => {
      const [me] = await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Ended from outside while this transaction waits: before the fix the client's unhandled
      // 'error' event ended the whole process (this test file with it).
      await admin.query('SELECT pg_terminate_backend($1)', [me?.pid]);
      await q.query('SELECT pg_sleep(5)');
    });
    const err = await tx.then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err !== null, 'the transaction failed');
    assert.ok(isDatabaseUnavailable(err), `unavailable, not an internal error: ${String(err)}`);
    const [row] = await db.query<{ ok: number }>('SELECT 1 AS ok');
    assert.equal(row?.ok, 1, 'the next query gets a fresh connection');
  } finally {
    await admin.close();
    await db.close();
  }
});

test('a query that never gets an answer is "unavailable" (the pool\'s read timeout), not an internal error', () => {
  assert.ok(isDatabaseUnavailable(new Error('Query read timeout')));
  assert.ok(!isDatabaseUnavailable(new Error('syntax error at or near "SELEC"')));
});
