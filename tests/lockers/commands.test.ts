import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withSecret } from '../support/world.ts';
import { assertError, assertInvalid, CABINET_RECORD_FIELDS, lockers, outboxOf, sharedApp, WIRE_TIME, type Json, type Lockers } from './helpers.ts';

await sharedApp();

interface LoggedCommand {
  command_id: string;
  command: string;
  door: string;
  source: string;
  acted_by: number | null;
  reason: string | null;
  order_id: string | null;
  executed_at: string | null;
}

async function logOf(l: Lockers, index: number): Promise<LoggedCommand[]> {
  return l.ctx.db.query<LoggedCommand>(
    'SELECT command_id, command, door, source, acted_by, reason, order_id, executed_at FROM cabinet_commands WHERE cabinet_id = $1 ORDER BY id',
    [l.world.cabinetIds[index]],
  );
}

async function ok(l: Lockers, index: number, body: Json): Promise<Json> {
  const res = await l.command(index, body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Json>();
}

test('a command answers with the cabinet, enabled and occupied as 1/0', async () => {
  const l = await lockers();
  const cabinet = await ok(l, 0, { command: 'open', acted_by: 5 });
  assert.deepEqual(Object.keys(cabinet).sort(), [...CABINET_RECORD_FIELDS].sort());
  assert.equal(cabinet.id, l.world.cabinetIds[0]);
  assert.equal(cabinet.enabled, 1);
  assert.equal(cabinet.occupied, 0);
  assert.equal(cabinet.state, 'open');
  assert.match(cabinet.created_at as string, WIRE_TIME);
  assert.match(cabinet.updated_at as string, WIRE_TIME);
  await l.placeOrder(0);
  assert.equal((await ok(l, 0, { command: 'close', acted_by: 5 })).occupied, 1);
});

test('each command changes what it says and nothing else', async () => {
  const l = await lockers();
  assert.equal((await ok(l, 0, { command: 'resize', size: 'large', acted_by: 1 })).size, 'large');
  assert.equal((await ok(l, 0, { command: 'set_thermal_mode', thermal_mode: 'freeze', acted_by: 1 })).thermal_mode, 'freeze');
  assert.equal((await ok(l, 0, { command: 'disable', acted_by: 1 })).enabled, 0);
  assert.equal((await ok(l, 0, { command: 'enable', acted_by: 1 })).enabled, 1);
  let c = await ok(l, 0, { command: 'open', acted_by: 1 });
  assert.deepEqual([c.state, c.rear_load_status], ['open', 'closed']);
  c = await ok(l, 0, { command: 'open', rearload: true, acted_by: 1 });
  assert.deepEqual([c.state, c.rear_load_status], ['open', 'open']);
  c = await ok(l, 0, { command: 'close', acted_by: 1 });
  assert.deepEqual([c.state, c.rear_load_status], ['closed', 'open']);
  c = await ok(l, 0, { command: 'close', rearload: true, acted_by: 1 });
  assert.deepEqual([c.state, c.rear_load_status], ['closed', 'closed']);
  assert.deepEqual([c.size, c.thermal_mode, c.enabled], ['large', 'freeze', 1]);
  // The listing agrees, and the other cabinets are untouched.
  const listed = await l.cabinet(0);
  assert.deepEqual([listed.size, listed.thermal_mode, listed.enabled], ['large', 'freeze', true]);
  const other = await l.cabinet(1);
  assert.deepEqual([other.size, other.thermal_mode, other.enabled, other.state], ['medium', 'ambient', true, 'closed']);
});

test('every command is logged with acted_by and queued for the locker device', async () => {
  const l = await lockers();
  await ok(l, 1, { command: 'resize', size: 'small', acted_by: 11 });
  await ok(l, 1, { command: 'set_thermal_mode', thermal_mode: 'chill', acted_by: 12 });
  await ok(l, 1, { command: 'open', rearload: true, acted_by: 13 });
  await ok(l, 1, { command: 'disable' });
  const log = await logOf(l, 1);
  assert.deepEqual(
    log.map((c) => [c.command, c.door, c.source, c.acted_by]),
    [
      ['resize', 'front', 'staff', 11],
      ['set_thermal_mode', 'front', 'staff', 12],
      ['open', 'rear', 'staff', 13],
      ['disable', 'front', 'staff', null],
    ],
  );
  for (const c of log) assert.match(c.executed_at ?? '', WIRE_TIME);
  const outbox = await outboxOf(l.ctx, l.world.lockerId);
  assert.deepEqual(
    outbox.map((m) => m.message_key),
    log.map((c) => c.command_id),
  );
  for (const m of outbox) {
    assert.equal(m.topic, `lockers/${l.world.lockerId}/commands`);
    assert.equal(m.payload.cabinet_key, 2);
    assert.equal(m.payload.cabinet_id, l.world.cabinetIds[1]);
    assert.equal(m.payload.command_id, m.message_key);
    assert.match(m.payload.issued_at as string, WIRE_TIME);
  }
  assert.deepEqual(
    outbox.map((m) => [m.payload.command, m.payload.door]),
    [
      ['resize', 'front'],
      ['set_thermal_mode', 'front'],
      ['open', 'rear'],
      ['disable', 'front'],
    ],
  );
  assert.equal(outbox[0]?.payload.size, 'small');
  assert.equal(outbox[1]?.payload.thermal_mode, 'chill');
});

test('resize needs a size and set_thermal_mode a valid thermal_mode', async () => {
  const l = await lockers();
  assertInvalid(await l.command(0, { command: 'resize' }), 'size');
  assertInvalid(await l.command(0, { command: 'resize', size: '  ' }), 'size');
  assertInvalid(await l.command(0, { command: 'set_thermal_mode' }), 'thermal_mode');
  assertInvalid(await l.command(0, { command: 'set_thermal_mode', thermal_mode: 'lukewarm' }), 'thermal_mode');
  assertInvalid(await l.command(0, { command: 'explode' }), 'command');
  assertInvalid(await l.command(0, {}), 'command');
  assertInvalid(await l.command(0, { command: 'open', acted_by: 'alice' }), 'acted_by');
  assertInvalid(await l.command(0, { command: 'close', delay: '10' }), 'delay');
  assert.deepEqual(await logOf(l, 0), [], 'refused commands are not logged');
  assert.deepEqual(await outboxOf(l.ctx, l.world.lockerId), [], 'nor sent');
});

test('the rear door of a locker without rear loading is 422', async () => {
  const l = await lockers({ rearLoading: false });
  assertInvalid(await l.command(0, { command: 'open', rearload: true }), 'rearload');
  assert.equal((await ok(l, 0, { command: 'open', rearload: false })).state, 'open');
});

test('opening or disabling an occupied cabinet needs a reason', async () => {
  const l = await lockers();
  await l.placeOrder(0, { order_id: 555 });
  assertInvalid(await l.command(0, { command: 'open', acted_by: 3 }), 'reason');
  assertInvalid(await l.command(0, { command: 'disable', acted_by: 3, reason: ' ' }), 'reason');
  assert.equal((await l.cabinet(0)).state, 'closed');
  const opened = await ok(l, 0, { command: 'open', acted_by: 3, reason: 'customer at the desk' });
  assert.equal(opened.state, 'open');
  assert.equal((await ok(l, 0, { command: 'disable', acted_by: 3, reason: 'broken hinge' })).enabled, 0);
  // Other commands need none.
  assert.equal((await ok(l, 0, { command: 'close', acted_by: 3 })).state, 'closed');
  const log = await logOf(l, 0);
  assert.deepEqual(
    log.map((c) => [c.command, c.reason]),
    [
      ['open', 'customer at the desk'],
      ['disable', 'broken hinge'],
      ['close', null],
    ],
  );
  // An unoccupied cabinet opens without one.
  assert.equal((await ok(l, 1, { command: 'open' })).state, 'open');
});

test("an order_id given for an occupied cabinet must be the cabinet's order", async () => {
  const l = await lockers();
  await l.placeOrder(0, { order_id: 555 });
  assertInvalid(await l.command(0, { command: 'open', reason: 'check', order_id: '556' }), 'order_id');
  assertInvalid(await l.command(0, { command: 'close', order_id: 554 }), 'order_id');
  assert.equal((await ok(l, 0, { command: 'open', reason: 'check', order_id: '555' })).state, 'open');
  assert.equal((await ok(l, 0, { command: 'close', order_id: 555 })).state, 'closed');
  assert.deepEqual(
    (await logOf(l, 0)).map((c) => c.order_id),
    ['555', '555'],
  );
});

test('a command for an unknown cabinet is 404', async () => {
  const l = await lockers();
  const res = await l.ctx.app.inject({ method: 'PUT', url: withSecret('/api/lockers/cabinets/2000000001'), payload: { command: 'open' } });
  assertError(res, 404, 'not_found');
  assertInvalid(await l.ctx.app.inject({ method: 'PUT', url: withSecret('/api/lockers/cabinets/x1'), payload: { command: 'open' } }), 'cabinet_id');
});
