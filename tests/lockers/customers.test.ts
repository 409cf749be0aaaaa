import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertError, assertInvalid, CABINET_RECORD_FIELDS, lockers, outboxOf, sharedApp, type Json, type Lockers } from './helpers.ts';

await sharedApp();

async function eventsOf(l: Lockers, orderId: unknown): Promise<string[]> {
  const rows = await l.ctx.db.query<{ kind: string }>('SELECT kind FROM locker_order_events WHERE locker_order_id = $1 ORDER BY id', [orderId]);
  return rows.map((r) => r.kind);
}

test('agree opens the front door, answers with boolean flags, and queues the open command for the locker', async () => {
  const l = await lockers({ cabinets: 3 });
  const order = await l.placeOrder(2, { order_id: 8080 });
  const res = await l.customer(order.open_code as string, 'agree');
  assert.equal(res.statusCode, 200, res.body);
  const cabinet = res.json<Json>();
  assert.deepEqual(Object.keys(cabinet).sort(), [...CABINET_RECORD_FIELDS].sort());
  assert.equal(cabinet.id, l.world.cabinetIds[2]);
  assert.equal(cabinet.state, 'open');
  assert.equal(cabinet.rear_load_status, 'closed');
  assert.equal(cabinet.enabled, true, 'enabled is a boolean in L5');
  assert.equal(cabinet.occupied, true, 'occupied is a boolean in L5');
  assert.deepEqual(await eventsOf(l, order.id), ['agree']);

  const outbox = await outboxOf(l.ctx, l.world.lockerId);
  assert.equal(outbox.length, 1);
  const [message] = outbox;
  assert.equal(message?.topic, `lockers/${l.world.lockerId}/commands`);
  assert.equal(message?.payload.command, 'open');
  assert.equal(message?.payload.door, 'front');
  assert.equal(message?.payload.cabinet_key, 3);
  const [logged] = await l.ctx.db.query<{ command_id: string; source: string; order_id: string; acted_by: null }>(
    'SELECT command_id, source, order_id, acted_by FROM cabinet_commands WHERE cabinet_id = $1',
    [l.world.cabinetIds[2]],
  );
  assert.deepEqual(logged, { command_id: message?.message_key, source: 'customer', order_id: '8080', acted_by: null });
});

test('here and disagree are recorded on the order and open nothing', async () => {
  const l = await lockers();
  const order = await l.placeOrder(0);
  for (const command of ['here', 'disagree']) {
    const res = await l.customer(order.open_code as string, command);
    assert.equal(res.statusCode, 200, res.body);
    const cabinet = res.json<Json>();
    assert.equal(cabinet.state, 'closed');
    assert.equal(cabinet.enabled, true);
    assert.equal(cabinet.occupied, true);
  }
  assert.deepEqual(await eventsOf(l, order.id), ['here', 'disagree']);
  assert.deepEqual(await outboxOf(l.ctx, l.world.lockerId), []);
  assert.equal((await l.cabinet(0)).state, 'closed');
});

test('an open code of no open order is 404', async () => {
  const l = await lockers();
  assertError(await l.customer('Zm9vYmFyYmF6cXV4cXV1eHh5enp5', 'agree'), 404, 'not_found');
  const order = await l.placeOrder(0);
  assert.equal((await l.completeByCode(order.open_code as string)).statusCode, 200);
  for (const command of ['here', 'agree', 'disagree']) assertError(await l.customer(order.open_code as string, command), 404, 'not_found');
  assert.deepEqual(await eventsOf(l, order.id), []);
  assert.deepEqual(await outboxOf(l.ctx, l.world.lockerId), [], 'a completed order opens nothing');
});

test('an unknown customer command is 422', async () => {
  const l = await lockers();
  const order = await l.placeOrder(0);
  assertInvalid(await l.customer(order.open_code as string, 'open'), 'command');
  assert.deepEqual(await eventsOf(l, order.id), []);
});
