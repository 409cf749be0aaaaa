import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { openDb, type Db } from '../../src/db/db.ts';
import { cancelJob, enqueueJob } from '../../src/jobs/queue.ts';
import { Scheduler } from '../../src/jobs/scheduler.ts';
import { testDb, testDatabaseUrl } from '../support/world.ts';

let db: Db;
before(async () => {
  db = await testDb();
  await db.query('CREATE TABLE IF NOT EXISTS test_job_runs (tag text NOT NULL, n integer NOT NULL, worker text NOT NULL)');
});

const kindOf = () => `test.${crypto.randomBytes(4).toString('hex')}`;

async function runs(tag: string): Promise<{ n: number; worker: string }[]> {
  return db.query('SELECT n, worker FROM test_job_runs WHERE tag = $1 ORDER BY n', [tag]);
}

function recorder(tag: string, worker: string) {
  return async (q: { query: Db['query'] }, payload: Record<string, unknown>) => {
    await q.query('INSERT INTO test_job_runs (tag, n, worker) VALUES ($1, $2, $3)', [tag, payload.n, worker]);
  };
}

test('a job runs once it is due by the clock, and not before', async () => {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ db, clock });
  const kind = kindOf();
  scheduler.register(kind, recorder(kind, 'a'));
  await db.tx((q) => enqueueJob(q, kind, { n: 1 }, new Date(clock.now().getTime() + 5_000)));
  clock.advance(4_999);
  assert.equal(await scheduler.runDue(), 0);
  assert.deepEqual(await runs(kind), []);
  clock.advance(1);
  assert.equal(await scheduler.runDue(), 1);
  assert.deepEqual(await runs(kind), [{ n: 1, worker: 'a' }]);
  assert.equal(await scheduler.runDue(), 0, 'a job that ran does not run again');
});

test('a job that fell due while the service was down runs at the next start', async () => {
  const clock = new ManualClock();
  const kind = kindOf();
  const before = new Scheduler({ db, clock });
  before.register(kind, recorder(kind, 'before'));
  await db.tx((q) => enqueueJob(q, kind, { n: 7 }, new Date(clock.now().getTime() + 60_000)));
  await before.stop(); // the service goes down with the job pending
  clock.advance(10 * 60_000);
  const after = new Scheduler({ db, clock, pollMs: 10 });
  after.register(kind, recorder(kind, 'after'));
  after.start();
  for (let i = 0; i < 200 && (await runs(kind)).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  await after.stop();
  assert.deepEqual(await runs(kind), [{ n: 7, worker: 'after' }]);
});

test('a job enqueued in a transaction that rolls back never runs', async () => {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ db, clock });
  const kind = kindOf();
  scheduler.register(kind, recorder(kind, 'a'));
  await assert.rejects(
    db.tx(async (q) => {
      await enqueueJob(q, kind, { n: 1 }, clock.now());
      throw new Error('the change failed');
    }),
  );
  assert.equal(await scheduler.runDue(), 0);
});

test('a failing job leaves no effect and is retried later', async () => {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ db, clock });
  const kind = kindOf();
  let calls = 0;
  scheduler.register(kind, async (q, payload) => {
    calls++;
    await recorder(kind, `try${calls}`)(q, payload);
    if (calls === 1) throw new Error('transient');
  });
  await db.tx((q) => enqueueJob(q, kind, { n: 3 }, clock.now()));
  assert.equal(await scheduler.runDue(), 0);
  assert.deepEqual(await runs(kind), [], 'the failed attempt was rolled back');
  clock.advance(60_000);
  assert.equal(await scheduler.runDue(), 1);
  assert.deepEqual(await runs(kind), [{ n: 3, worker: 'try2' }]);
});

test('enqueueing again with the same key moves the pending job, and cancel drops it', async () => {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ db, clock });
  const kind = kindOf();
  const key = `${kind}:cabinet`;
  scheduler.register(kind, recorder(kind, 'a'));
  const at = (ms: number) => new Date(clock.now().getTime() + ms);
  await db.tx((q) => enqueueJob(q, kind, { n: 1 }, at(1_000), { key }));
  await db.tx((q) => enqueueJob(q, kind, { n: 2 }, at(5_000), { key }));
  clock.advance(1_000);
  assert.equal(await scheduler.runDue(), 0, 'the first due time was replaced');
  clock.advance(4_000);
  assert.equal(await scheduler.runDue(), 1);
  assert.deepEqual(await runs(kind), [{ n: 2, worker: 'a' }]);
  await db.tx((q) => enqueueJob(q, kind, { n: 3 }, at(1_000), { key }));
  await db.tx((q) => cancelJob(q, key, clock.now()));
  clock.advance(2_000);
  assert.equal(await scheduler.runDue(), 0);
});

test('two instances on one PostgreSQL run every job exactly once', async () => {
  const clock = new ManualClock();
  const kind = kindOf();
  const second = await openDb({ url: await testDatabaseUrl(), poolSize: 5 });
  try {
    const a = new Scheduler({ db, clock });
    const b = new Scheduler({ db: second, clock });
    const slow = (worker: string) => async (q: { query: Db['query'] }, payload: Record<string, unknown>) => {
      await q.query('SELECT pg_sleep(0.002)');
      await recorder(kind, worker)(q, payload);
    };
    a.register(kind, slow('a'));
    b.register(kind, slow('b'));
    await db.tx(async (q) => {
      for (let n = 0; n < 60; n++) await enqueueJob(q, kind, { n }, clock.now());
    });
    const [ranA, ranB] = await Promise.all([a.runDue(), b.runDue()]);
    const rows = await runs(kind);
    assert.equal(rows.length, 60);
    assert.equal(new Set(rows.map((r) => r.n)).size, 60, 'no job ran twice');
    assert.equal(ranA + ranB, 60);
    assert.ok(ranA > 0 && ranB > 0, `both instances worked (${ranA}/${ranB})`);
  } finally {
    await second.close();
  }
});

test('a prepared job whose preparation fails is tried again later, and commits once when one succeeds', async () => {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ db, clock });
  const kind = kindOf();
  let failures = 1;
  const commit = recorder(kind, 'a');
  scheduler.register(kind, {
    leaseMs: 60_000,
    prepare: async (payload) => {
      if (failures-- > 0) throw new Error('speech busy');
      return Number(payload.n) * 10;
    },
    commit: (q, n: number) => commit(q, { n }),
  });
  await db.tx((q) => enqueueJob(q, kind, { n: 4 }, clock.now()));
  assert.equal(await scheduler.runDue(), 0, 'the failed preparation committed nothing');
  const [job] = await db.query<{ attempts: number; last_error: string; done: boolean }>(
    'SELECT attempts, last_error, done_at IS NOT NULL AS done FROM jobs WHERE kind = $1',
    [kind],
  );
  assert.deepEqual(job, { attempts: 1, last_error: 'speech busy', done: false });
  clock.advance(2_000);
  assert.equal(await scheduler.runDue(), 1);
  assert.deepEqual(await runs(kind), [{ n: 40, worker: 'a' }]);
  assert.equal(await scheduler.runDue(), 0);
});
