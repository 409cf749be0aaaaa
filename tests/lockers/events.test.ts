// The locker events of the event log (contract section 11): each change writes its event once,
// with its details, in the change's own statement; a refused or replayed request writes none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertError, assertInvalid, lockers, sharedApp, type Json, type Lockers } from './helpers.ts';

await sharedApp();

interface LoggedEvent {
  type: string;
  status: string;
  organization_id: number;
  location_id: number | null;
  internal_id: string | null;
  details: Json;
  message: string | null;
}

/** The events of the test's own organization, oldest first. */
async function eventsOf(l: Lockers): Promise<LoggedEvent[]> {
  return l.ctx.db.query<LoggedEvent>(
    'SELECT type, status, organization_id, location_id, internal_id, details, message FROM events WHERE organization_id = $1 ORDER BY id',
    [l.world.organizationId],
  );
}

/** The events written since `before` was read. */
async function newEvents(l: Lockers, before: readonly LoggedEvent[]): Promise<LoggedEvent[]> {
  return (await eventsOf(l)).slice(before.length);
}

function assertEvent(e: LoggedEvent | undefined, l: Lockers, expected: { status: string; internalId: number; details: Json }): void {
  assert.ok(e, `a ${expected.status} event`);
  assert.equal(e.type, 'locker');
  assert.equal(e.status, expected.status);
  assert.equal(e.organization_id, l.world.organizationId);
  assert.equal(e.location_id, l.world.locationId);
  assert.equal(e.internal_id, String(expected.internalId));
  assert.deepEqual(e.details, expected.details);
  assert.ok(typeof e.message === 'string' && e.message.length > 0, 'a message for a person');
}

const cabinetOf = (l: Lockers, index: number) => ({ locker_id: l.world.lockerId, cabinet_id: l.world.cabinetIds[index] as number, cabinet_key: index + 1 });

test('a new order writes order_created once; a replay, a refusal and a mismatch write none', async () => {
  const l = await lockers();
  const order = await l.placeOrder(0, { order_id: 71 });
  const events = await eventsOf(l);
  assert.equal(events.length, 1);
  assertEvent(events[0], l, { status: 'order_created', internalId: order.id as number, details: { ...cabinetOf(l, 0), order_id: 71, id: order.id } });

  assert.equal((await l.order(0, { order_id: 71 })).statusCode, 201, 'the replay answers the same order');
  assertError(await l.order(0, { order_id: 72 }), 409, 'cabinet_occupied');
  assertInvalid(await l.order(1, { location_id: l.world.locationId + 1 }), 'location_id');
  assert.equal((await l.command(2, { command: 'disable' })).statusCode, 200);
  assertError(await l.order(2), 409, 'cabinet_disabled');
  assert.deepEqual(await newEvents(l, events), []);
});

test('a completion writes order_completed once, by cabinet or by open code, with or without a cool-off; completing again writes none', async () => {
  const l = await lockers();
  const first = await l.placeOrder(0, { order_id: 81 });
  const second = await l.placeOrder(1, { order_id: 82 });
  const before = await eventsOf(l);

  assert.equal((await l.completeByCabinet(0)).statusCode, 200);
  assert.equal((await l.completeByCode(second.open_code as string, { delay: 30 })).statusCode, 200);
  const written = await newEvents(l, before);
  assert.equal(written.length, 2);
  assertEvent(written[0], l, { status: 'order_completed', internalId: first.id as number, details: { ...cabinetOf(l, 0), order_id: 81, id: first.id } });
  assertEvent(written[1], l, { status: 'order_completed', internalId: second.id as number, details: { ...cabinetOf(l, 1), order_id: 82, id: second.id } });

  const after = await eventsOf(l);
  assert.equal((await l.completeByCabinet(0)).statusCode, 200, 'the completed order comes back unchanged');
  assert.equal((await l.completeByCode(first.open_code as string)).statusCode, 200);
  assertError(await l.completeByCabinet(2), 404, 'not_found');
  assert.deepEqual(await newEvents(l, after), []);
});

test('a staff command writes cabinet_opened / cabinet_closed when it changes a door, with the open order; other commands write none', async () => {
  const l = await lockers();
  const order = await l.placeOrder(0, { order_id: 91 });
  const before = await eventsOf(l);

  assert.equal((await l.command(0, { command: 'open', reason: 'restock' })).statusCode, 200);
  assert.equal((await l.command(0, { command: 'open', reason: 'again' })).statusCode, 200, 'already open: no change');
  assert.equal((await l.command(1, { command: 'open', rearload: true })).statusCode, 200);
  assert.equal((await l.command(1, { command: 'close', rearload: true })).statusCode, 200);
  assert.equal((await l.command(2, { command: 'resize', size: 'large' })).statusCode, 200);
  assert.equal((await l.command(2, { command: 'close' })).statusCode, 200, 'already closed: no change');
  assertInvalid(await l.command(0, { command: 'disable' }), 'reason');

  const written = await newEvents(l, before);
  assert.deepEqual(
    written.map((e) => e.status),
    ['cabinet_opened', 'cabinet_opened', 'cabinet_closed'],
  );
  assertEvent(written[0], l, {
    status: 'cabinet_opened',
    internalId: l.world.cabinetIds[0] as number,
    details: { ...cabinetOf(l, 0), door: 'front', order_id: 91, id: order.id },
  });
  assertEvent(written[1], l, {
    status: 'cabinet_opened',
    internalId: l.world.cabinetIds[1] as number,
    details: { ...cabinetOf(l, 1), door: 'rear', order_id: null, id: null },
  });
  assertEvent(written[2], l, {
    status: 'cabinet_closed',
    internalId: l.world.cabinetIds[1] as number,
    details: { ...cabinetOf(l, 1), door: 'rear', order_id: null, id: null },
  });
});

test("a customer's agree writes cabinet_opened with the order; here, disagree and an unknown code write none", async () => {
  const l = await lockers();
  const order = await l.placeOrder(1, { order_id: 101 });
  const before = await eventsOf(l);

  assert.equal((await l.customer(order.open_code as string, 'here')).statusCode, 200);
  assert.equal((await l.customer(order.open_code as string, 'agree')).statusCode, 200);
  assert.equal((await l.customer(order.open_code as string, 'agree')).statusCode, 200, 'already open: no change');
  assert.equal((await l.customer(order.open_code as string, 'disagree')).statusCode, 200);
  assertError(await l.customer('no-such-code', 'agree'), 404, 'not_found');

  const written = await newEvents(l, before);
  assert.equal(written.length, 1);
  assertEvent(written[0], l, {
    status: 'cabinet_opened',
    internalId: l.world.cabinetIds[1] as number,
    details: { ...cabinetOf(l, 1), door: 'front', order_id: 101, id: order.id },
  });
});

test('a delayed close writes cabinet_closed when it runs, not when asked; an overtaken one writes none', async () => {
  const l = await lockers();
  assert.equal((await l.command(0, { command: 'open' })).statusCode, 200);
  assert.equal((await l.command(1, { command: 'open' })).statusCode, 200);
  const before = await eventsOf(l);

  assert.equal((await l.command(0, { command: 'close', delay: 5 })).statusCode, 200);
  assert.equal((await l.command(1, { command: 'close', delay: 5 })).statusCode, 200);
  assert.equal((await l.command(1, { command: 'open' })).statusCode, 200, 'overtakes the delayed close while already open');
  assert.deepEqual(await newEvents(l, before), [], 'nothing changed yet');

  l.ctx.clock.advance(5_000);
  await l.ctx.scheduler.runDue();
  const written = await newEvents(l, before);
  assert.equal(written.length, 1);
  assertEvent(written[0], l, {
    status: 'cabinet_closed',
    internalId: l.world.cabinetIds[0] as number,
    details: { ...cabinetOf(l, 0), door: 'front', order_id: null, id: null },
  });
});

test("a locker's report writes an event per door it changes; a report that changes nothing, or is refused, writes none", async () => {
  const l = await lockers();
  const order = await l.placeOrder(0, { order_id: 111 });
  const before = await eventsOf(l);

  const report = {
    cabinets: [
      { key: 1, front_status: 'open', rear_status: 'open' },
      { key: 2, front_status: 'closed' },
    ],
  };
  assert.equal((await l.status(report)).statusCode, 200);
  assert.equal((await l.status(report)).statusCode, 200, 'the same report again changes nothing');
  assertInvalid(
    await l.status({
      cabinets: [
        { key: 1, front_status: 'closed' },
        { key: 99, front_status: 'open' },
      ],
    }),
    'cabinets[1].key',
  );
  assertInvalid(
    await l.status({
      cabinets: [
        { key: 2, front_status: 'open' },
        { key: 2, front_status: 'open' },
      ],
    }),
    'cabinets[1].key',
  );

  const written = await newEvents(l, before);
  const cabinet = { ...cabinetOf(l, 0), order_id: 111, id: order.id };
  assert.deepEqual(written.map((e) => [e.status, e.details.door]).sort(), [
    ['cabinet_opened', 'front'],
    ['cabinet_opened', 'rear'],
  ]);
  for (const e of written) {
    assertEvent(e, l, { status: 'cabinet_opened', internalId: l.world.cabinetIds[0] as number, details: { ...cabinet, door: e.details.door } });
  }

  const after = await eventsOf(l);
  assert.equal((await l.status({ cabinets: [{ key: 1, front_status: 'closed' }] })).statusCode, 200);
  // Version 2: the first close of the order's door also makes it ready (section 13, tests/lockers/lifecycle.test.ts).
  const closed = (await newEvents(l, after)).filter((e) => e.status !== 'order_ready');
  assert.equal(closed.length, 1);
  assertEvent(closed[0], l, { status: 'cabinet_closed', internalId: l.world.cabinetIds[0] as number, details: { ...cabinet, door: 'front' } });
});

test("a version 1 locker's refused report writes none", async () => {
  const l = await lockers({ lockerVersion: 1 });
  assertError(await l.status({ cabinets: [{ key: 1, front_status: 'open' }] }), 422, 'unsupported_locker_version');
  assert.deepEqual(await eventsOf(l), []);
});

test('racing reports and commands that open the same door write one cabinet_opened', async () => {
  const l = await lockers();
  const opening = { cabinets: [{ key: 1, front_status: 'open' }] };
  const answers = await Promise.all([
    ...Array.from({ length: 8 }, () => l.status(opening)),
    ...Array.from({ length: 4 }, () => l.command(0, { command: 'open' })),
  ]);
  for (const res of answers) assert.equal(res.statusCode, 200, res.body);
  const written = await eventsOf(l);
  assert.deepEqual(
    written.map((e) => [e.status, e.details.cabinet_id, e.details.door]),
    [['cabinet_opened', l.world.cabinetIds[0], 'front']],
  );
});

test("a report that changes no door wakes none of the event log's subscribers; one that does wakes them", async () => {
  const l = await lockers();
  const report = { cabinets: [{ key: 1, front_status: 'open' }] };
  assert.equal((await l.status(report)).statusCode, 200);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  await settle(); // the wake-up of that change is behind us
  let woken = 0;
  const off = l.ctx.db.commits.on('events', () => woken++);
  try {
    assert.equal((await l.status(report)).statusCode, 200);
    await settle();
    assert.equal(woken, 0, 'nothing changed, nobody is woken');
    assert.equal((await l.status({ cabinets: [{ key: 1, front_status: 'closed' }] })).statusCode, 200);
    for (let i = 0; i < 50 && woken === 0; i++) await settle();
    assert.equal(woken, 1);
  } finally {
    off();
  }
});
