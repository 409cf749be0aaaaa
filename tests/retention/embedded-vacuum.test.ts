// The embedded database has no autovacuum (PGlite runs PostgreSQL single-user): the space of rows
// retention deletes would never be reused, and the file would grow by every day's rows for ever.
// The service's own retention sweep vacuums it instead. On PostgreSQL the server's autovacuum does
// that work, and the sweep leaves it alone.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-05-01T10:00:00.000Z') });
});

const jobsBytes = async () => Number((await ctx.db.query<{ n: string }>(`SELECT pg_relation_size('jobs') AS n`))[0]?.n);

test('on the embedded database, what retention deletes is vacuumed: a day after day of finished jobs keeps the table the same size', { skip: process.env.TEST_DATABASE_URL ? 'PostgreSQL: the server\'s autovacuum reclaims the space' : false }, async () => {
  assert.equal(ctx.db.kind, 'pglite');
  const sizes: number[] = [];
  for (let day = 0; day < 4; day++) {
    // A day's finished jobs, done long before the retention window (90 days by default).
    const doneAt = new Date(ctx.clock.now().getTime() - 100 * 86_400_000);
    await ctx.db.query(`INSERT INTO jobs (kind, payload, run_at, done_at)
      SELECT 'test.day', jsonb_build_object('pad', repeat('x', 400)), $1, $1 FROM generate_series(1, 3000)`, [doneAt]);
    sizes.push(await jobsBytes());
    const deleted = await ctx.retention.runNow();
    assert.ok(deleted.jobs >= 3000, JSON.stringify(deleted));
  }
  const first = sizes[0] as number;
  assert.ok(first > 1_000_000, `a day's rows take room: ${first}`);
  // Without the vacuum each day adds its own pages: 2x, 3x, 4x the first day's size.
  assert.ok(sizes.every((s) => s <= first * 1.2), `the table stays the size of one day's rows: ${sizes.join(', ')}`);
});
