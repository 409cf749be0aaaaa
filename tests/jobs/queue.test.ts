// The fragments features compose into their statements to ask for jobs and call them off: a key
// pending keeps or takes the new job, a condition can keep the pending one, and a job called off
// stays as a record, done without running.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { sql } from '../../src/db/sql.ts';
import { callOffJobs, enqueueKeyedJobs, enqueueReplacingJobs } from '../../src/jobs/queue.ts';
import { testDb } from '../support/world.ts';

const db = await testDb();
const at = new Date('2026-05-01T10:00:00Z');

const keyOf = () => `test.queue:${crypto.randomBytes(4).toString('hex')}`;
const job = (key: string, n: number) => sql`SELECT 'test.queue', jsonb_build_object('n', ${n}::int), ${at}::timestamptz, ${key}::text`;

async function jobsOf(key: string) {
  return db.query<{ n: number; done: boolean; attempts: number }>(
    `SELECT (payload->>'n')::int AS n, done_at IS NOT NULL AS done, attempts FROM jobs WHERE dedupe_key = $1 ORDER BY id`,
    [key],
  );
}

test('a keyed job keeps the pending one of its key, or takes its place, or takes it only where the condition holds', async () => {
  const key = keyOf();
  await db.statement((q) => q.run(enqueueKeyedJobs(job(key, 1))));
  await db.statement((q) => q.run(enqueueKeyedJobs(job(key, 2))));
  assert.deepEqual(await jobsOf(key), [{ n: 1, done: false, attempts: 0 }]);
  await db.statement((q) => q.run(enqueueReplacingJobs(job(key, 3))));
  assert.deepEqual(await jobsOf(key), [{ n: 3, done: false, attempts: 0 }]);
  const higher = sql`(EXCLUDED.payload->>'n')::int > (jobs.payload->>'n')::int`;
  await db.statement((q) => q.run(enqueueReplacingJobs(job(key, 2), higher)));
  assert.deepEqual(await jobsOf(key), [{ n: 3, done: false, attempts: 0 }]);
  await db.statement((q) => q.run(enqueueReplacingJobs(job(key, 4), higher)));
  assert.deepEqual(await jobsOf(key), [{ n: 4, done: false, attempts: 0 }]);
});

test('a job called off is kept, done without running, and its key can be asked for again', async () => {
  const key = keyOf();
  await db.statement((q) => q.run(enqueueKeyedJobs(job(key, 1))));
  await db.statement((q) => q.run(callOffJobs(sql`SELECT ${key}::text`, at)));
  assert.deepEqual(await jobsOf(key), [{ n: 1, done: true, attempts: 0 }]);
  await db.statement((q) => q.run(enqueueKeyedJobs(job(key, 2))));
  assert.deepEqual(await jobsOf(key), [
    { n: 1, done: true, attempts: 0 },
    { n: 2, done: false, attempts: 0 },
  ]);
});
