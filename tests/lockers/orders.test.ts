import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withSecret } from '../support/world.ts';
import { assertError, assertInvalid, lockers, sharedApp, WIRE_TIME, type Json } from './helpers.ts';

await sharedApp();

const CREATED_FIELDS = ['order_id', 'cabinet_id', 'open_code', 'locker_id', 'organization_id', 'location_id', 'app_owner_id', 'updated_at', 'created_at', 'id'];
// Version 2 (contract section 4) adds status and pickup_deadline to the full record.
const RECORD_FIELDS = [...CREATED_FIELDS, 'completed_at', 'completed_by', 'completed_device_id', 'canceled_at', 'application', 'status', 'pickup_deadline'];
const OPEN_CODE = /^[A-Za-z0-9_-]{22,}$/;

test('creating an order answers 201 with exactly the ten fields of the creation view', async () => {
  const l = await lockers();
  const res = await l.order(0, { order_id: 778899 });
  assert.equal(res.statusCode, 201, res.body);
  const order = res.json<Json>();
  assert.deepEqual(Object.keys(order).sort(), [...CREATED_FIELDS].sort());
  assert.equal(order.order_id, 778899);
  assert.equal(order.cabinet_id, l.world.cabinetIds[0]);
  assert.equal(order.locker_id, l.world.lockerId);
  assert.equal(order.organization_id, l.world.organizationId);
  assert.equal(order.location_id, l.world.locationId);
  assert.equal(order.app_owner_id, null);
  assert.equal(typeof order.id, 'number');
  assert.match(order.created_at as string, WIRE_TIME);
  assert.match(order.updated_at as string, WIRE_TIME);
  assert.match(order.open_code as string, OPEN_CODE);
  // 128 random bits at least: base64url carries 6 bits a character.
  assert.ok((order.open_code as string).length * 6 >= 128);
});

test('open codes differ from order to order', async () => {
  const l = await lockers({ cabinets: 3 });
  const codes = await Promise.all([0, 1, 2].map(async (i) => (await l.placeOrder(i)).open_code));
  assert.equal(new Set(codes).size, 3);
});

test('ids that do not belong together are refused with 422 naming the field', async () => {
  const l = await lockers();
  const other = await lockers({ ctx: l.ctx });
  assertInvalid(await l.order(0, { locker_id: other.world.lockerId }), 'locker_id');
  assertInvalid(await l.order(0, { location_id: other.world.locationId }), 'location_id');
  assertInvalid(await l.order(0, { organization_id: other.world.organizationId }), 'organization_id');
  assertInvalid(await l.order(0, { cabinet_id: other.world.cabinetIds[0] }), 'locker_id', 'location_id', 'organization_id');
  assertInvalid(await l.order(0, { cabinet_id: 2_000_000_000 }), 'cabinet_id');
  // None of them took the cabinet.
  assert.equal((await l.cabinet(0)).occupied, 0);
  await l.placeOrder(0);
});

test('a wrongly typed or incomplete creation is 422 with errors by field', async () => {
  const l = await lockers();
  assertInvalid(await l.order(0, { order_id: '12' }), 'order_id');
  assertInvalid(await l.order(0, { rearload: 'no' }), 'rearload');
  assertInvalid(await l.order(0, { cabinet_id: 1.5 }), 'cabinet_id');
  assertInvalid(await l.order(0, { order_id: 2 ** 60 }), 'order_id');
  const missing = await l.ctx.app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    payload: { cabinet_id: l.world.cabinetIds[0] },
  });
  assertInvalid(missing, 'rearload', 'locker_id', 'order_id', 'organization_id', 'location_id');
  // Unknown fields are ignored.
  assert.equal((await l.order(0, { note: 'leave at the door' })).statusCode, 201);
});

test('rear loading is only asked of a locker that has it', async () => {
  const without = await lockers({ rearLoading: false });
  assertInvalid(await without.order(0, { rearload: true }), 'rearload');
  assert.equal((await without.order(0, { rearload: false })).statusCode, 201);
  const withRear = await lockers({ ctx: without.ctx, rearLoading: true });
  assert.equal((await withRear.order(0, { rearload: true })).statusCode, 201);
});

test('a disabled cabinet takes no order: 409 cabinet_disabled', async () => {
  const l = await lockers();
  assert.equal((await l.command(0, { command: 'disable', acted_by: 7 })).statusCode, 200);
  assertError(await l.order(0), 409, 'cabinet_disabled');
  assert.equal((await l.command(0, { command: 'enable', acted_by: 7 })).statusCode, 200);
  assert.equal((await l.order(0)).statusCode, 201);
});

test('a second order for an occupied cabinet is 409 cabinet_occupied', async () => {
  const l = await lockers();
  await l.placeOrder(0, { order_id: 1 });
  assertError(await l.order(0, { order_id: 2 }), 409, 'cabinet_occupied');
  // Same order number, but not the same request: still a different order.
  assertError(await l.order(0, { order_id: 1, rearload: true }), 409, 'cabinet_occupied');
});

test('an identical creation repeated while the order is open gets the same order back', async () => {
  const l = await lockers();
  const first = await l.placeOrder(0, { order_id: 42 });
  const again = await l.order(0, { order_id: 42 });
  assert.equal(again.statusCode, 201);
  assert.deepEqual(again.json(), first);
  const rows = await l.ctx.db.query('SELECT id FROM locker_orders WHERE cabinet_id = $1', [l.world.cabinetIds[0]]);
  assert.equal(rows.length, 1);
  // Once completed, the same request is a new order.
  assert.equal((await l.completeByCabinet(0)).statusCode, 200);
  const next = await l.placeOrder(0, { order_id: 42 });
  assert.notEqual(next.id, first.id);
  assert.notEqual(next.open_code, first.open_code);
});

// A real race on PostgreSQL (TEST_DATABASE_URL); on PGlite the requests queue on one connection.
test('of 25 concurrent orders for one cabinet exactly one is created', async () => {
  const l = await lockers();
  const results = await Promise.all(Array.from({ length: 25 }, (_, i) => l.order(0, { order_id: 900 + i })));
  const statuses = results.map((r) => r.statusCode);
  assert.equal(statuses.filter((s) => s === 201).length, 1, `statuses: ${statuses.join(',')}`);
  for (const r of results.filter((x) => x.statusCode !== 201)) assertError(r, 409, 'cabinet_occupied');
  const open = await l.ctx.db.query('SELECT id FROM locker_orders WHERE cabinet_id = $1 AND completed_at IS NULL', [l.world.cabinetIds[0]]);
  assert.equal(open.length, 1);
});

test('25 concurrent identical creations all get the one same order', async () => {
  const l = await lockers();
  const results = await Promise.all(Array.from({ length: 25 }, () => l.order(0, { order_id: 31337 })));
  assert.deepEqual([...new Set(results.map((r) => r.statusCode))], [201]);
  assert.equal(new Set(results.map((r) => r.json<Json>().id)).size, 1);
});

test('completing by cabinet returns the full order record and releases the cabinet', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  l.ctx.clock.advance(60_000);
  const res = await l.completeByCabinet(0, { completed_by: 12, completed_device_id: 34 });
  assert.equal(res.statusCode, 200, res.body);
  const done = res.json<Json>();
  assert.deepEqual(Object.keys(done).sort(), [...RECORD_FIELDS].sort());
  for (const f of CREATED_FIELDS.filter((f) => f !== 'updated_at')) assert.deepEqual(done[f], created[f], f);
  assert.match(done.completed_at as string, WIRE_TIME);
  assert.equal(done.updated_at, done.completed_at);
  assert.equal(Date.parse(done.completed_at as string), l.ctx.clock.now().getTime());
  assert.equal(done.completed_by, 12);
  assert.equal(done.completed_device_id, 34);
  assert.equal(done.canceled_at, null);
  assert.equal(done.application, null);
  const cabinet = await l.cabinet(0);
  assert.equal(cabinet.occupied, 0);
  assert.equal(cabinet.released_at, done.completed_at);
  assert.equal(cabinet.cool_off_period, false);
  assert.equal((await l.order(0, { order_id: 2 })).statusCode, 201, 'the released cabinet takes a new order');
});

test('completing a completed order returns it unchanged, by cabinet and by open code', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  const first = (await l.completeByCabinet(0, { completed_by: 1 })).json<Json>();
  l.ctx.clock.advance(5_000);
  const byCabinet = await l.completeByCabinet(0, { completed_by: 2, delay: 30 });
  assert.equal(byCabinet.statusCode, 200);
  assert.deepEqual(byCabinet.json(), first);
  const byCode = await l.completeByCode(created.open_code as string, { delay: 30 });
  assert.equal(byCode.statusCode, 200);
  assert.deepEqual(byCode.json(), first);
  // The repeats started no cool-off.
  assert.equal((await l.cabinet(0)).cool_off_period, false);
});

test('completing by open code completes that order', async () => {
  const l = await lockers();
  const created = await l.placeOrder(1);
  const res = await l.completeByCode(created.open_code as string);
  assert.equal(res.statusCode, 200, res.body);
  const done = res.json<Json>();
  assert.equal(done.id, created.id);
  assert.match(done.completed_at as string, WIRE_TIME);
  assert.equal(done.completed_by, null);
  assert.equal((await l.cabinet(1)).occupied, 0);
});

test('a completion may come without a body, or with an empty JSON body', async () => {
  const l = await lockers();
  await l.placeOrder(0);
  const res = await l.ctx.app.inject({
    method: 'PUT',
    url: withSecret(`/api/lockers/orders/cabinets/${l.world.cabinetIds[0]}`),
    headers: { 'content-type': 'application/json' },
    body: '',
  });
  assert.equal(res.statusCode, 200, res.body);
  const created = await l.placeOrder(1);
  assert.equal((await l.completeByCode(created.open_code as string)).statusCode, 200);
});

test('completing where there is no order is 404', async () => {
  const l = await lockers();
  assertError(await l.completeByCabinet(0), 404, 'not_found');
  assertError(await l.completeByCode('no-such-open-code-at-all-anywhere'), 404, 'not_found');
  const unknownCabinet = await l.ctx.app.inject({
    method: 'PUT',
    url: withSecret('/api/lockers/orders/cabinets/2000000000'),
    payload: {},
  });
  assertError(unknownCabinet, 404, 'not_found');
});

test('a completion with wrongly typed options is 422', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  assertInvalid(await l.completeByCabinet(0, { delay: 'soon' }), 'delay');
  assertInvalid(await l.completeByCabinet(0, { delay: -1 }), 'delay');
  assertInvalid(await l.completeByCode(created.open_code as string, { completed_by: 'bob' }), 'completed_by');
  // Nothing was completed.
  assert.equal((await l.cabinet(0)).occupied, 1);
});

test('concurrent completions of one order complete it once and all return that completion', async () => {
  const l = await lockers();
  const created = await l.placeOrder(0);
  const results = await Promise.all([
    ...Array.from({ length: 6 }, (_, i) => l.completeByCabinet(0, { completed_by: i })),
    ...Array.from({ length: 6 }, (_, i) => l.completeByCode(created.open_code as string, { completed_device_id: i })),
  ]);
  assert.deepEqual([...new Set(results.map((r) => r.statusCode))], [200]);
  const bodies = results.map((r) => r.json<Json>());
  for (const b of bodies) assert.deepEqual(b, bodies[0]);
  assert.equal((await l.cabinet(0)).occupied, 0);
});
