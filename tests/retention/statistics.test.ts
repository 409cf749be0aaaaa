// Planner statistics where the database keeps none itself: the embedded database has no
// autovacuum, and a PostgreSQL may have it turned off. The service then analyzes each table that
// grew since it was last analyzed, so statements planned while it was small are planned again.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { Statistics } from '../../src/retention/statistics.ts';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-05-01T10:00:00.000Z') });
});

const reltuples = async (table: string) =>
  Number((await ctx.db.query<{ n: number }>(`SELECT reltuples AS n FROM pg_class WHERE oid = to_regclass($1)`, [table]))[0]?.n);

const addJobs = (n: number) => ctx.db.query(`INSERT INTO jobs (kind, payload, run_at, done_at)
  SELECT 'test.stats', jsonb_build_object('pad', repeat('x', 200)), now(), now() FROM generate_series(1, $1::int)`, [n]);

const isJobs = (table: string) => table.endsWith('.jobs');

test('a table that grew is analyzed once, and again only after it grows by a fifth more', async (t) => {
  // Where the server's autovacuum runs, it may analyze the table in the middle of the test.
  if (ctx.statistics === null) return t.skip('autovacuum keeps the statistics on this server');
  const statistics = new Statistics({ db: ctx.db, onError: (err) => assert.fail(String(err)) });
  await statistics.runNow(); // whatever the service's start left unanalyzed
  await addJobs(4000);
  assert.equal((await statistics.runNow()).filter(isJobs).length, 1);
  const counted = await reltuples('jobs');
  assert.ok(counted >= 3600 && counted <= 4400, `the planner now counts the rows: ${counted}`);

  await addJobs(200); // 5% more: not worth another look yet
  assert.deepEqual((await statistics.runNow()).filter(isJobs), []);
  await addJobs(1200);
  assert.equal((await statistics.runNow()).filter(isJobs).length, 1);
  assert.ok((await reltuples('jobs')) >= 5000);
});

test('the service keeps statistics itself exactly where nothing else does: the embedded database, or PostgreSQL with autovacuum off', async () => {
  if (ctx.db.kind === 'pglite') {
    assert.notEqual(ctx.statistics, null);
    return;
  }
  const [row] = await ctx.db.query<{ autovacuum: string }>('SHOW autovacuum');
  assert.equal(ctx.statistics !== null, row?.autovacuum === 'off');
});
