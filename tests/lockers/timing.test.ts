// Cool-offs and delayed closes, driven by the manual clock and the durable scheduler. The jobs of
// these tests are due only at this file's clock, so they live in this one file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Scheduler } from '../../src/jobs/scheduler.ts';
import { lockerJobs } from '../../src/lockers/jobs.ts';
import { isoMicros } from '../../src/db/timestamps.ts';
import { assertError, lockers, outboxOf, sharedApp, type Json, type Lockers } from './helpers.ts';

await sharedApp();

async function runDue(l: Lockers, ms: number): Promise<void> {
  l.ctx.clock.advance(ms);
  await l.ctx.scheduler.runDue();
}

async function pendingCloses(l: Lockers, index: number) {
  return l.ctx.db.query<{ command_id: string; executed_at: string | null; canceled_at: string | null }>(
    "SELECT command_id, executed_at, canceled_at FROM cabinet_commands WHERE cabinet_id = $1 AND command = 'close' ORDER BY id",
    [l.world.cabinetIds[index]],
  );
}

test('a completion with a delay keeps the cabinet cooling off, taking no order, until the delay has passed', async () => {
  const l = await lockers();
  await l.placeOrder(0, { order_id: 1 });
  const done = await l.completeByCabinet(0, { delay: 30 });
  assert.equal(done.statusCode, 200, done.body);
  const completedAt = Date.parse(done.json<Json>().completed_at as string);

  let cabinet = await l.cabinet(0);
  assert.equal(cabinet.cool_off_period, true);
  assert.equal(cabinet.occupied, 1);
  assert.equal(cabinet.released_at, null);
  assertError(await l.order(0, { order_id: 2 }), 409, 'cabinet_cooling_off');

  await runDue(l, 29_999);
  assert.equal((await l.cabinet(0)).cool_off_period, true);
  assertError(await l.order(0, { order_id: 2 }), 409, 'cabinet_cooling_off');

  await runDue(l, 1);
  cabinet = await l.cabinet(0);
  assert.equal(cabinet.cool_off_period, false);
  assert.equal(cabinet.occupied, 0);
  assert.equal(cabinet.released_at, isoMicros(new Date(completedAt + 30_000)), 'released when the cool-off ended');
  assert.equal((await l.order(0, { order_id: 2 })).statusCode, 201);
});

test('a completion by open code with a delay cools the cabinet off the same way', async () => {
  const l = await lockers();
  const order = await l.placeOrder(1);
  assert.equal((await l.completeByCode(order.open_code as string, { delay: 5 })).statusCode, 200);
  assertError(await l.order(1, { order_id: 77 }), 409, 'cabinet_cooling_off');
  // The other cabinets are not cooling off.
  assert.equal((await l.order(0)).statusCode, 201);
  await runDue(l, 5_000);
  assert.equal((await l.cabinet(1)).occupied, 0);
  assert.equal((await l.order(1, { order_id: 77 })).statusCode, 201);
});

test('a cool-off that ended before its job ran lets a new order in, and the late job leaves that order alone', async () => {
  const l = await lockers();
  await l.placeOrder(0, { order_id: 1 });
  assert.equal((await l.completeByCabinet(0, { delay: 10 })).statusCode, 200);
  l.ctx.clock.advance(10_000);
  assert.equal((await l.cabinet(0)).cool_off_period, false);
  assert.equal((await l.order(0, { order_id: 2 })).statusCode, 201);
  await l.ctx.scheduler.runDue();
  const cabinet = await l.cabinet(0);
  assert.equal(cabinet.occupied, 1);
  assert.equal(cabinet.released_at, null);
});

test('a delayed close closes the door when its delay has passed, and only then tells the locker', async () => {
  const l = await lockers();
  assert.equal((await l.command(0, { command: 'open', acted_by: 4 })).statusCode, 200);
  const res = await l.command(0, { command: 'close', delay: 10, acted_by: 4 });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json<Json>().state, 'open', 'the door is still open until the delay has passed');
  assert.deepEqual(
    (await outboxOf(l.ctx, l.world.lockerId)).map((m) => m.payload.command),
    ['open'],
  );

  await runDue(l, 9_999);
  assert.equal((await l.cabinet(0)).state, 'open');

  await runDue(l, 1);
  assert.equal((await l.cabinet(0)).state, 'closed');
  const [close] = await pendingCloses(l, 0);
  assert.equal(close?.executed_at, isoMicros(l.ctx.clock.now()));
  const outbox = await outboxOf(l.ctx, l.world.lockerId);
  assert.deepEqual(
    outbox.map((m) => [m.payload.command, m.payload.door]),
    [
      ['open', 'front'],
      ['close', 'front'],
    ],
  );
  assert.equal(outbox[1]?.message_key, close?.command_id);
  assert.equal(outbox[1]?.payload.cabinet_key, 1);
  assert.equal(outbox[1]?.payload.issued_at, isoMicros(l.ctx.clock.now()));
});

test('an open overtakes a delayed close waiting on the same door, not on the other one', async () => {
  const l = await lockers();
  await l.command(0, { command: 'open' });
  await l.command(0, { command: 'open', rearload: true });
  await l.command(0, { command: 'close', delay: 10 });
  await l.command(0, { command: 'close', rearload: true, delay: 10 });
  await l.command(0, { command: 'open' }); // the front again: its delayed close is dropped
  const id = (await l.cabinet(0)).id;
  const waiting = await l.ctx.db.query<{ dedupe_key: string }>(`SELECT dedupe_key FROM jobs WHERE dedupe_key LIKE $1 AND done_at IS NULL ORDER BY dedupe_key`, [
    `lockers:close:${id}:%`,
  ]);
  assert.deepEqual(
    waiting.map((j) => j.dedupe_key),
    [`lockers:close:${id}:rear`],
    "the front close's job is called off, the rear one waits",
  );
  await runDue(l, 10_000);
  const cabinet = await l.cabinet(0);
  assert.equal(cabinet.state, 'open');
  assert.equal(cabinet.rear_load_status, 'closed');
  const closes = await pendingCloses(l, 0);
  assert.equal(closes.length, 2);
  assert.ok(closes[0]?.canceled_at !== null && closes[0]?.executed_at === null, 'the front close was overtaken');
  assert.ok(closes[1]?.executed_at !== null && closes[1]?.canceled_at === null, 'the rear close ran');
  const sent = (await outboxOf(l.ctx, l.world.lockerId)).map((m) => [m.payload.command, m.payload.door]);
  assert.deepEqual(sent, [
    ['open', 'front'],
    ['open', 'rear'],
    ['open', 'front'],
    ['close', 'rear'],
  ]);
});

test("a customer's agree overtakes a delayed close of the front door", async () => {
  const l = await lockers();
  const order = await l.placeOrder(0);
  await l.command(0, { command: 'open', reason: 'loading' });
  await l.command(0, { command: 'close', delay: 20 });
  assert.equal((await l.customer(order.open_code as string, 'agree')).statusCode, 200);
  await runDue(l, 20_000);
  assert.equal((await l.cabinet(0)).state, 'open');
});

test('a second delayed close replaces the first', async () => {
  const l = await lockers();
  await l.command(0, { command: 'open' });
  await l.command(0, { command: 'close', delay: 10 });
  await l.command(0, { command: 'close', delay: 20 });
  await runDue(l, 10_000);
  assert.equal((await l.cabinet(0)).state, 'open');
  await runDue(l, 10_000);
  assert.equal((await l.cabinet(0)).state, 'closed');
  const closesSent = (await outboxOf(l.ctx, l.world.lockerId)).filter((m) => m.payload.command === 'close');
  assert.equal(closesSent.length, 1);
});

test('delayed work is kept in the database: another instance runs it', async () => {
  const l = await lockers();
  await l.command(0, { command: 'open' });
  await l.command(0, { command: 'close', delay: 15 });
  await l.placeOrder(1);
  await l.completeByCabinet(1, { delay: 15 });
  l.ctx.clock.advance(15_000);
  const other = new Scheduler({ db: l.ctx.db, clock: l.ctx.clock });
  other.registerAll(lockerJobs({ clock: l.ctx.clock }));
  assert.ok((await other.runDue()) >= 2);
  assert.equal((await l.cabinet(0)).state, 'closed');
  assert.equal((await l.cabinet(1)).occupied, 0);
});
