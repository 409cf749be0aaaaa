// The pickup lifecycle (contract section 13): ready on the first close of the order's door, the
// pickup deadline and reminders as durable jobs, L8 cancel and L9 new open code, and their races.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { withSecret } from '../support/world.ts';
import { assertError, lockers, sharedApp, WIRE_TIME, type Json, type Lockers } from './helpers.ts';

await sharedApp();

const HOUR = 3_600_000;

/** The locker events of the test's organization with this status. */
async function events(l: Lockers, status: string): Promise<Json[]> {
  return l.ctx.db.query<Json>("SELECT status, internal_id, details FROM events WHERE organization_id = $1 AND type = 'locker' AND status = $2 ORDER BY id", [
    l.world.organizationId,
    status,
  ]);
}

async function pendingPickupJobs(l: Lockers, orderId: unknown): Promise<Json[]> {
  return l.ctx.db.query<Json>('SELECT dedupe_key, run_at FROM jobs WHERE done_at IS NULL AND dedupe_key LIKE $1', [`lockers:pickup:${String(orderId)}:%`]);
}

async function statusOf(l: Lockers, orderId: unknown): Promise<string> {
  const [row] = await l.ctx.db.query<{ s: string }>(
    `SELECT CASE WHEN canceled_at IS NOT NULL THEN 'canceled' WHEN completed_at IS NOT NULL THEN 'completed'
       WHEN expired_at IS NOT NULL THEN 'expired' WHEN ready_at IS NOT NULL THEN 'ready' ELSE 'open' END AS s
     FROM locker_orders WHERE id = $1`,
    [orderId],
  );
  return row?.s ?? 'none';
}

const cancel = (l: Lockers, id: unknown, body?: Json) =>
  l.ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/orders/${String(id)}/cancel`), ...(body === undefined ? {} : { payload: body }) });
const renew = (l: Lockers, id: unknown, body?: Json) =>
  l.ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/orders/${String(id)}/open_code`), ...(body === undefined ? {} : { payload: body }) });

async function setHours(l: Lockers, pickup: number | null, reminder: number | null): Promise<void> {
  await applyProvisioning(l.ctx.db, l.ctx.clock, {
    locations: [
      {
        id: l.world.locationId,
        organization_id: l.world.organizationId,
        name: `Store ${l.world.locationId}`,
        locker_pickup_hours: pickup,
        locker_reminder_hours: reminder,
      },
    ],
  });
}

test('an order is open, becomes ready once on the first commanded close of its door, and its record carries status and pickup_deadline', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  assert.deepEqual(Object.keys(created).sort(), [
    'app_owner_id',
    'cabinet_id',
    'created_at',
    'id',
    'location_id',
    'locker_id',
    'open_code',
    'order_id',
    'organization_id',
    'updated_at',
  ]);
  assert.equal(await statusOf(l, created.id), 'open');
  assert.equal((await l.command(0, { command: 'open', reason: 'loading' })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'open', 'opening does not make it ready');
  assert.equal((await l.command(0, { command: 'close' })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'ready');
  assert.equal((await l.command(0, { command: 'open', reason: 'again' })).statusCode, 200);
  assert.equal((await l.command(0, { command: 'close' })).statusCode, 200);
  const ready = await events(l, 'order_ready');
  assert.equal(ready.length, 1, 'one order_ready');
  assert.equal(ready[0]?.internal_id, String(created.id));
  assert.deepEqual(ready[0]?.details, { locker_id: l.world.lockerId, cabinet_id: l.world.cabinetIds[0], cabinet_key: 1, order_id: 5000, id: created.id });

  const done = await l.completeByCabinet(0);
  assert.equal(done.statusCode, 200);
  const record = done.json<Json>();
  assert.equal(record.status, 'completed');
  assert.match(String(record.pickup_deadline), WIRE_TIME);
  assert.equal(new Date(String(record.pickup_deadline)).getTime() - new Date(String(record.created_at)).getTime(), 72 * HOUR);
});

test('a rearload order is made ready by its rear door, reported by the locker (L7); the front door does not', async () => {
  const l = await lockers({ rearLoading: true });
  const created = await l.placeOrder(0, { rearload: true });
  assert.equal((await l.status({ cabinets: [{ key: 1, front_status: 'open' }] })).statusCode, 200);
  assert.equal((await l.status({ cabinets: [{ key: 1, front_status: 'closed' }] })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'open');
  assert.equal((await l.status({ cabinets: [{ key: 1, rear_status: 'open' }] })).statusCode, 200);
  assert.equal((await l.status({ cabinets: [{ key: 1, rear_status: 'closed' }] })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'ready');
  assert.equal((await events(l, 'order_ready')).length, 1);
});

test('a delayed close makes the order ready when it runs, not before', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  assert.equal((await l.command(0, { command: 'close', delay: 30 })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'open');
  l.ctx.clock.advance(31_000);
  await l.ctx.scheduler.runDue();
  assert.equal(await statusOf(l, created.id), 'ready');
  assert.equal((await events(l, 'order_ready')).length, 1);
});

test('reminders come every locker_reminder_hours before the deadline; at the deadline the order expires and stays bound until completed', async () => {
  const l = await lockers();
  await setHours(l, 3, 1);
  const created = await l.placeOrder(0);
  assert.equal(await statusOf(l, created.id), 'open');
  await l.ctx.scheduler.runDue();
  assert.equal((await events(l, 'pickup_reminder')).length, 0, 'nothing before its time');
  for (let hour = 1; hour <= 2; hour++) {
    l.ctx.clock.advance(HOUR);
    await l.ctx.scheduler.runDue();
    const reminders = await events(l, 'pickup_reminder');
    assert.equal(reminders.length, hour);
    assert.equal((reminders[hour - 1]?.details as Json | undefined)?.reminder_count, hour);
  }
  l.ctx.clock.advance(HOUR);
  await l.ctx.scheduler.runDue();
  assert.equal((await events(l, 'pickup_reminder')).length, 2, 'no reminder at the deadline');
  assert.equal((await events(l, 'order_expired')).length, 1);
  assert.equal(await statusOf(l, created.id), 'expired');
  assert.deepEqual(await pendingPickupJobs(l, created.id), []);
  l.ctx.clock.advance(10 * HOUR);
  await l.ctx.scheduler.runDue();
  assert.equal((await events(l, 'order_expired')).length, 1, 'expired once');

  assert.equal((await l.order(0, { order_id: 9 })).statusCode, 409, 'an expired order keeps its cabinet');
  assert.equal((await l.command(0, { command: 'close' })).statusCode, 200);
  assert.equal(await statusOf(l, created.id), 'expired', 'a close does not make an expired order ready');
  const done = await l.completeByCode(String(created.open_code));
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json<Json>().status, 'completed');
});

test('the default deadline is 72 hours, and an order that ends drops its pickup job (completion and cancel)', async () => {
  const l = await lockers();
  const a = await l.placeOrder(0);
  const b = await l.placeOrder(1);
  assert.equal((await pendingPickupJobs(l, a.id)).length, 1);
  assert.equal((await l.completeByCabinet(0)).statusCode, 200);
  assert.deepEqual(await pendingPickupJobs(l, a.id), []);
  assert.equal((await cancel(l, b.id)).statusCode, 200);
  assert.deepEqual(await pendingPickupJobs(l, b.id), []);
  l.ctx.clock.advance(100 * HOUR);
  await l.ctx.scheduler.runDue();
  assert.equal((await events(l, 'pickup_reminder')).length, 0);
  assert.equal((await events(l, 'order_expired')).length, 0);
});

test('L8 cancels an open order and releases its cabinet; again returns it unchanged; completing it afterwards is 409', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  l.ctx.clock.advance(1000);
  const res = await cancel(l, created.id);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<Json>();
  assert.equal(body.status, 'canceled');
  assert.match(String(body.canceled_at), WIRE_TIME);
  assert.equal(body.completed_at, null);
  const cabinet = await l.cabinet(0);
  assert.equal(cabinet.occupied, 0);
  assert.equal(cabinet.released_at, body.canceled_at);
  assert.equal((await events(l, 'order_canceled')).length, 1);

  l.ctx.clock.advance(1000);
  const again = await cancel(l, created.id);
  assert.equal(again.statusCode, 200);
  assert.deepEqual(again.json(), body, 'unchanged');
  assert.equal((await events(l, 'order_canceled')).length, 1, 'one event');

  assertError(await l.completeByCode(String(created.open_code)), 409, 'order_canceled');
  assertError(await l.completeByCabinet(0), 409, 'order_canceled');
  assertError(await renew(l, created.id), 409, 'order_canceled');
  assert.equal((await l.customer(String(created.open_code), 'agree')).statusCode, 404);
  assert.equal((await l.order(0, { order_id: 77 })).statusCode, 201, 'the cabinet takes a new order');
});

test('L8 on a completed order is 409, on an unknown id 404, with a bad id 422, for another organization 404: nothing changes', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  const other = await l.placeOrder(1);
  assert.equal((await l.completeByCabinet(0)).statusCode, 200);
  assertError(await cancel(l, created.id), 409, 'order_completed');
  assertError(await renew(l, created.id), 409, 'order_completed');
  assertError(await cancel(l, 2_000_000_000), 404, 'not_found');
  assertError(await renew(l, 2_000_000_000), 404, 'not_found');
  assert.equal((await cancel(l, 'abc')).statusCode, 422);
  assert.equal((await cancel(l, 0)).statusCode, 422);
  assertError(await cancel(l, other.id, { organization_id: l.world.organizationId + 1 }), 404, 'not_found');
  assertError(await renew(l, other.id, { location_id: l.world.locationId + 1 }), 404, 'not_found');
  assert.equal(await statusOf(l, created.id), 'completed');
  assert.equal(await statusOf(l, other.id), 'open');
  assert.equal((await events(l, 'order_canceled')).length, 0);
  const [row] = await l.ctx.db.query<{ open_code: string }>('SELECT open_code FROM locker_orders WHERE id = $1', [other.id]);
  assert.equal(row?.open_code, other.open_code, 'the open code is unchanged');
});

test('L9 gives an open order a new open code: the old one stops working, the new one works', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  l.ctx.clock.advance(1000);
  const res = await renew(l, created.id, { organization_id: l.world.organizationId, location_id: l.world.locationId });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<Json>();
  assert.deepEqual(Object.keys(body).sort(), Object.keys(created).sort(), "the creation view's ten fields");
  assert.notEqual(body.open_code, created.open_code);
  assert.match(String(body.open_code), /^[A-Za-z0-9_-]{32}$/);
  assert.equal(body.id, created.id);
  assertError(await l.customer(String(created.open_code), 'agree'), 404, 'not_found');
  assert.equal((await l.completeByCode(String(created.open_code))).statusCode, 404);
  assert.equal((await l.customer(String(body.open_code), 'agree')).statusCode, 200);
  assert.equal((await l.completeByCode(String(body.open_code))).statusCode, 200);
});

test(`a cancel racing a completion: exactly one wins, the other gets its contract answer`, async () => {
  const l = await lockers();
  for (let round = 0; round < 5; round++) {
    const created = await l.placeOrder(0, { order_id: 100 + round });
    const [c, d] = await Promise.all([cancel(l, created.id), l.completeByCode(String(created.open_code))]);
    const status = await statusOf(l, created.id);
    if (status === 'canceled') {
      assert.equal(c.statusCode, 200);
      assertError(d, 409, 'order_canceled');
    } else {
      assert.equal(status, 'completed');
      assert.equal(d.statusCode, 200);
      assertError(c, 409, 'order_completed');
    }
    const ended = (await events(l, 'order_canceled')).length + (await events(l, 'order_completed')).length;
    assert.equal(ended, round + 1, 'one ending event per order');
  }
});

test(`a new open code racing the old code's agree: the agree works before, or is refused after`, async () => {
  const l = await lockers();
  for (let round = 0; round < 5; round++) {
    const created = await l.placeOrder(0, { order_id: 200 + round });
    const [r, a] = await Promise.all([renew(l, created.id), l.customer(String(created.open_code), 'agree')]);
    assert.equal(r.statusCode, 200);
    assert.ok(a.statusCode === 200 || a.statusCode === 404, a.body);
    const [agreed] = await l.ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM locker_order_events WHERE locker_order_id = $1 AND kind = 'agree'", [
      created.id,
    ]);
    assert.equal(agreed?.n, a.statusCode === 200 ? 1 : 0, 'recorded exactly when answered 200');
    assert.equal((await l.completeByCode(String(r.json<Json>().open_code))).statusCode, 200);
  }
});
