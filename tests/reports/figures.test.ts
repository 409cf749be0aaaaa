// P1 from its kept figures (issue 36, item 1): a closed request is folded into its day's and its
// month's figures as it closes, an open one is read from its row; a long range reads months and
// days, not requests; reports in flight are bounded per credential and on the instance.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { isDatabaseUnavailable } from '../../src/db/errors.ts';
import { ReportGate } from '../../src/reports/gate.ts';
import { percentiles, spansOf } from '../../src/reports/rules.ts';
import { ann, bob, cfhClient, createRequest, success } from '../cfh/support.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { report, reportWorld } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2025-12-20T12:00:00.000Z') });
});

test('P1 counts a closed request from the figures kept as it closed, even once its row is gone', async () => {
  const w = await reportWorld(ctx);
  const client = cfhClient(ctx.app, w.token);
  ctx.clock.set('2025-12-20T12:00:00.000Z');
  const a = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.set('2025-12-20T12:00:40.000Z');
  success(await client.claim(a.message_id, ann));
  ctx.clock.set('2025-12-20T12:02:00.000Z');
  success(await client.complete(a.message_id, 'sale', ann));
  const q = { location_id: w.locationId, from: '2016-01-01', to: '2026-02-01' };
  const before = (await report(ctx.app, w.reports, 'cfh', q)).json();
  assert.equal(before.total, 1);
  // Gone from cfh_requests (as retention deletes old requests): the figures stay.
  await ctx.db.query('DELETE FROM cfh_requests WHERE message_id = $1', [a.message_id]);
  const after = await report(ctx.app, w.reports, 'cfh', q);
  assert.equal(after.statusCode, 200, after.body);
  assert.deepEqual(after.json(), before);
  assert.deepEqual(after.json().time_to_claim, { median_s: 40, p90_s: 40 });
  assert.deepEqual(after.json().by_employee, [{ claimed_by: 'Ann', claimed: 1, completed: 1 }]);
});

test('a range of whole months and days around them counts each request once; open requests count from their rows', async () => {
  const w = await reportWorld(ctx, { timeZone: 'Europe/Paris' });
  const client = cfhClient(ctx.app, w.token);
  const closedAt = async (iso: string, claimSeconds: number) => {
    ctx.clock.set(iso);
    const r = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    ctx.clock.set(new Date(Date.parse(iso) + claimSeconds * 1000).toISOString());
    success(await client.claim(r.message_id, bob));
    success(await client.complete(r.message_id, 'sale', bob));
  };
  await closedAt('2025-12-14T23:30:00.000Z', 10); // Dec 15 in Paris: the range's first day
  await closedAt('2026-01-15T10:00:00.000Z', 20); // a whole month
  await closedAt('2026-03-10T22:59:00.000Z', 30); // Mar 10 23:59 in Paris: the last day
  await closedAt('2026-03-10T23:00:00.000Z', 90); // Mar 11 in Paris: outside
  ctx.clock.set('2026-02-02T09:00:00.000Z');
  const open = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.set('2026-02-02T09:01:00.000Z');
  success(await client.claim(open.message_id, ann));
  const res = await report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: '2025-12-15', to: '2026-03-10' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.total, 4);
  assert.equal(body.per_day.length, 86);
  assert.deepEqual(
    body.per_day.filter((d: { requests: number }) => d.requests > 0).map((d: { day: string }) => d.day),
    ['2025-12-15', '2026-01-15', '2026-02-02', '2026-03-10'],
  );
  assert.deepEqual(body.by_source, [{ key: 'api', name: 'API', requests: 4 }]);
  assert.deepEqual(body.time_to_claim, { median_s: 25, p90_s: 51 }, '10, 20, 30 and the open one`s 60');
  assert.deepEqual(body.time_to_complete, { median_s: 20, p90_s: 28 });
  assert.deepEqual(body.by_employee, [
    { claimed_by: 'Bob', claimed: 3, completed: 3 },
    { claimed_by: 'Ann', claimed: 1, completed: 0 },
  ]);
});

test("the migration's backfill folds closed requests as their closing did", async () => {
  const file = fs.readFileSync(path.resolve(import.meta.dirname, '../../src/db/migrations/036_cfh_report_figures.sql'), 'utf8');
  const backfill = file.slice(file.indexOf('WITH facts AS'));
  const table = async (name: string) => ctx.db.query(`SELECT * FROM ${name} ORDER BY 1, 2, 3, 4, 5`);
  const kept = { days: await table('cfh_report_days'), counts: await table('cfh_report_counts') };
  assert.ok(kept.counts.length > 0);
  const rolledBack = new Error('rolled back');
  await assert.rejects(
    ctx.db.tx(async (q) => {
      await q.query('DELETE FROM cfh_report_days; DELETE FROM cfh_report_counts');
      // The first test's request is gone from cfh_requests: its figures cannot be made again.
      await q.query(backfill);
      const again = async (name: string) => q.query(`SELECT * FROM ${name} ORDER BY 1, 2, 3, 4, 5`);
      const made = { days: await again('cfh_report_days'), counts: await again('cfh_report_counts') };
      const notFirst = <T extends { location_id: number }>(rows: T[]) =>
        rows.filter((r) => r.location_id !== Math.min(...kept.days.map((d) => d.location_id as number)));
      assert.deepEqual(notFirst(made.days as never[]), notFirst(kept.days as never[]));
      assert.deepEqual(notFirst(made.counts as never[]), notFirst(kept.counts as never[]));
      throw rolledBack;
    }),
    rolledBack,
  );
});

test('a credential runs at most 2 reports at once (429, Retry-After); the instance 3, then a report waits its turn, then 503', async () => {
  const gate = new ReportGate({ perCredential: 2, inFlight: 3, waitMs: 50, waiting: 1 });
  const held: (() => void)[] = [];
  const hold = () => new Promise<void>((resolve) => held.push(resolve));
  const a1 = gate.run('a', hold);
  const a2 = gate.run('a', hold);
  await assert.rejects(gate.run('a', hold), (e: { status: number; code: string; headers: Record<string, string> }) => {
    assert.equal(e.status, 429);
    assert.equal(e.code, 'too_many_reports');
    assert.equal(e.headers['retry-after'], '1');
    return true;
  });
  const b1 = gate.run('b', hold);
  // The instance is full: b's second waits; c's finds the waiting line full.
  const b2 = gate.run('b', async () => 'b2');
  await assert.rejects(gate.run('c', hold), (e: { status: number }) => e.status === 503);
  await assert.rejects(b2, (e: { status: number; headers: Record<string, string> }) => e.status === 503 && e.headers['retry-after'] === '2');
  // One ends: the next report runs.
  const b3 = gate.run('b', async () => 'b3');
  (held.shift() as () => void)();
  assert.equal(await b3, 'b3');
  for (const release of held) release();
  await Promise.all([a1, a2, b1]);
  assert.equal(await gate.run('a', async () => 'again'), 'again');
});

test('reports of one token beyond 2 at once are refused while 2 wait on the database', async () => {
  const w = await reportWorld(ctx);
  const q = { location_id: w.locationId, from: '2025-01-01', to: '2025-12-31' };
  let release = () => {};
  const locked = new Promise<void>((resolve) => (release = resolve));
  let holding = () => {};
  const held = new Promise<void>((resolve) => (holding = resolve));
  const lock = ctx.db.tx(async (tx) => {
    await tx.query('LOCK TABLE cfh_report_days IN ACCESS EXCLUSIVE MODE');
    holding();
    await locked;
  });
  await held;
  const two = [report(ctx.app, w.reports, 'cfh', q), report(ctx.app, w.reports, 'cfh', q)];
  await new Promise((r) => setTimeout(r, 200));
  const third = await report(ctx.app, w.reports, 'cfh', q);
  assert.equal(third.statusCode, 429, third.body);
  assert.equal(third.json().code, 'too_many_reports');
  assert.equal(third.headers['retry-after'], '1');
  release();
  await lock;
  for (const res of await Promise.all(two)) assert.equal(res.statusCode, 200, res.body);
});

test('a statement that ran past its timeout is unavailable (503 with Retry-After), not an internal error', () => {
  assert.ok(isDatabaseUnavailable(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })));
});

test('P1 reads a range as its whole years, the whole months around them and the days around those', () => {
  assert.deepEqual(spansOf({ from: '2016-01-01', to: '2025-12-31' }), [{ grain: 2, from: '2016-01-01', until: '2026-01-01' }]);
  assert.deepEqual(spansOf({ from: '2016-11-29', to: '2026-11-28' }), [
    { grain: 2, from: '2017-01-01', until: '2026-01-01' },
    { grain: 1, from: '2016-12-01', until: '2017-01-01' },
    { grain: 0, from: '2016-11-29', until: '2016-12-01' },
    { grain: 1, from: '2026-01-01', until: '2026-11-01' },
    { grain: 0, from: '2026-11-01', until: '2026-11-29' },
  ]);
  assert.deepEqual(spansOf({ from: '2025-12-15', to: '2026-03-10' }), [
    { grain: 1, from: '2026-01-01', until: '2026-03-01' },
    { grain: 0, from: '2025-12-15', until: '2026-01-01' },
    { grain: 0, from: '2026-03-01', until: '2026-03-11' },
  ]);
  assert.deepEqual(spansOf({ from: '2026-02-03', to: '2026-02-27' }), [{ grain: 0, from: '2026-02-03', until: '2026-02-28' }]);
  assert.deepEqual(spansOf({ from: '2024-02-01', to: '2024-02-29' }), [{ grain: 1, from: '2024-02-01', until: '2024-03-01' }]);
});

test('percentiles of kept buckets interpolate as percentile_cont', () => {
  assert.deepEqual(percentiles([]), { median_s: null, p90_s: null });
  assert.deepEqual(
    percentiles([
      { n: 1, seconds: 30 },
      { n: 1, seconds: 60 },
    ]),
    { median_s: 45, p90_s: 57 },
  );
  assert.deepEqual(
    percentiles([
      { n: 3, seconds: 30 },
      { n: 1, seconds: 100 },
    ]),
    { median_s: 10, p90_s: 73 },
  );
});
