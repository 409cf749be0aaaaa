import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertError, assertInvalid, lockers, sharedApp, WIRE_TIME, type Lockers } from './helpers.ts';

await sharedApp();

async function lockerRow(l: Lockers) {
  const [row] = await l.ctx.db.query<{ ip: string | null; firmware: string | null; last_seen_at: string | null }>(
    'SELECT ip, firmware, last_seen_at FROM lockers WHERE id = $1',
    [l.world.lockerId],
  );
  return row;
}

async function statusEvents(l: Lockers) {
  return l.ctx.db.query<{ type: string; event: unknown; created_at: string }>(
    'SELECT type, event, created_at FROM locker_status_events WHERE locker_id = $1 ORDER BY id',
    [l.world.lockerId],
  );
}

test('a status report sets each door, the locker info and last-seen time, and records the event', async () => {
  const l = await lockers({ cabinets: 3 });
  const res = await l.status({
    cabinets: [
      { key: 1, front_status: 'open', rear_status: 'closed' },
      { key: 3, front_status: 'closed', rear_status: 'open' },
    ],
    locker_info: { ip: '10.0.0.7', firmware: '2.4.1' },
    event: { type: 'active' },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(typeof res.json<{ message: string }>().message, 'string');
  const [one, two, three] = [await l.cabinet(0), await l.cabinet(1), await l.cabinet(2)];
  assert.deepEqual([one.state, one.rear_load_status], ['open', 'closed']);
  assert.deepEqual([two.state, two.rear_load_status], ['closed', 'closed'], 'an unreported cabinet is unchanged');
  assert.deepEqual([three.state, three.rear_load_status], ['closed', 'open']);
  const locker = await lockerRow(l);
  assert.equal(locker?.ip, '10.0.0.7');
  assert.equal(locker?.firmware, '2.4.1');
  assert.equal(locker?.last_seen_at, `${l.ctx.clock.now().toISOString().slice(0, 23)}000Z`);
  const events = await statusEvents(l);
  assert.equal(events.length, 1);
  assert.equal(events[0]?.type, 'active');
  assert.match(events[0]?.created_at ?? '', WIRE_TIME);

  // A report without info or event still counts as a sighting and keeps the info.
  l.ctx.clock.advance(10_000);
  assert.equal((await l.status({ cabinets: [{ key: 1, front_status: 'closed' }] })).statusCode, 200);
  const later = await lockerRow(l);
  assert.equal(later?.ip, '10.0.0.7');
  assert.equal(Date.parse(later?.last_seen_at ?? ''), l.ctx.clock.now().getTime());
  assert.equal((await l.cabinet(0)).state, 'closed');
  assert.equal((await statusEvents(l)).length, 1);
});

test('a door reported as null or not at all is not reported (contract section 5, version 3): the report is applied for the other door, and that door keeps its state', async () => {
  const l = await lockers({ cabinets: 3 });
  assert.equal(
    (
      await l.status({
        cabinets: [
          { key: 1, front_status: 'closed', rear_status: 'open' },
          { key: 2, front_status: 'open', rear_status: 'closed' },
        ],
      })
    ).statusCode,
    200,
  );
  l.ctx.clock.advance(5_000);
  // The deployed document's example body, as a locker without a rear door (or a sensor) sends it.
  const res = await l.status({
    cabinets: [
      { key: 1, front_status: 'open', rear_status: null },
      { key: 2, front_status: null, rear_status: 'open' },
      { key: 3, rear_status: 'open' },
    ],
    locker_info: { ip: '10.0.0.7', firmware: '2.4.1' },
    event: { type: 'active' },
  });
  assert.equal(res.statusCode, 200, res.body);
  const [one, two, three] = [await l.cabinet(0), await l.cabinet(1), await l.cabinet(2)];
  assert.deepEqual([one.state, one.rear_load_status], ['open', 'open'], 'rear null: the rear door keeps its state');
  assert.deepEqual([two.state, two.rear_load_status], ['open', 'open'], 'front null: the front door keeps its state');
  assert.deepEqual([three.state, three.rear_load_status], ['closed', 'open'], 'front absent: the front door keeps its state');
  const locker = await lockerRow(l);
  assert.deepEqual([locker?.ip, locker?.firmware], ['10.0.0.7', '2.4.1']);
  assert.equal(Date.parse(locker?.last_seen_at ?? ''), l.ctx.clock.now().getTime());
  assert.deepEqual(
    (await statusEvents(l)).map((e) => e.type),
    ['active'],
  );
});

test('a cabinet entry that reports neither door (both null or absent) is 422 and applies nothing', async () => {
  const l = await lockers({ cabinets: 2 });
  for (const entry of [{ key: 2, front_status: null, rear_status: null }, { key: 2 }, { key: 2, rear_status: null }]) {
    const res = await l.status({
      cabinets: [{ key: 1, front_status: 'open', rear_status: null }, entry],
      locker_info: { ip: '10.0.0.9' },
      event: { type: 'active' },
    });
    assertInvalid(res, 'cabinets[1]');
  }
  assert.equal((await l.cabinet(0)).state, 'closed');
  assert.deepEqual(await lockerRow(l), { ip: null, firmware: null, last_seen_at: null });
  assert.deepEqual(await statusEvents(l), []);
});

test('a report naming an unknown cabinet key is 422 and applies nothing', async () => {
  const l = await lockers({ cabinets: 2 });
  const res = await l.status({
    cabinets: [
      { key: 1, front_status: 'open', rear_status: 'open' },
      { key: 99, front_status: 'open', rear_status: 'open' },
    ],
    locker_info: { ip: '10.0.0.9', firmware: '9.9' },
    event: { type: 'active' },
  });
  assertInvalid(res, 'cabinets[1].key');
  const one = await l.cabinet(0);
  assert.deepEqual([one.state, one.rear_load_status], ['closed', 'closed']);
  assert.deepEqual(await lockerRow(l), { ip: null, firmware: null, last_seen_at: null });
  assert.deepEqual(await statusEvents(l), []);
  // A key repeated in one report is ambiguous: also refused whole.
  assertInvalid(
    await l.status({
      cabinets: [
        { key: 1, front_status: 'open' },
        { key: 1, front_status: 'closed' },
      ],
    }),
    'cabinets[1].key',
  );
  assert.equal((await l.cabinet(0)).state, 'closed');
});

test("a locker's report touches only its own cabinets", async () => {
  const a = await lockers({ cabinets: 1 });
  const b = await lockers({ ctx: a.ctx, cabinets: 1 });
  assert.equal((await a.status({ cabinets: [{ key: 1, front_status: 'open' }] })).statusCode, 200);
  assert.equal((await a.cabinet(0)).state, 'open');
  assert.equal((await b.cabinet(0)).state, 'closed');
});

test('a missing or unknown api-key is 401', async () => {
  const l = await lockers();
  const body = { cabinets: [{ key: 1, front_status: 'open' }] };
  assertError(await l.ctx.app.inject({ method: 'POST', url: '/api/lockers/cabinet/status', payload: body }), 401, 'unauthorized');
  assertError(await l.status(body, 'not-a-locker-key'), 401, 'unauthorized');
  assert.equal((await l.cabinet(0)).state, 'closed');
});

test('a locker that is not version 2 is 422', async () => {
  const l = await lockers({ lockerVersion: 1 });
  assertError(await l.status({ cabinets: [{ key: 1, front_status: 'open' }] }), 422, 'unsupported_locker_version');
  assert.equal((await l.cabinet(0)).state, 'closed');
  assert.equal((await lockerRow(l))?.last_seen_at, null);
});

test('a malformed report is 422 with errors by field', async () => {
  const l = await lockers();
  assertInvalid(await l.status({}), 'cabinets');
  assertInvalid(await l.status({ cabinets: [{ key: 1, front_status: 'ajar' }] }), 'cabinets[0].front_status');
  assertInvalid(await l.status({ cabinets: [{ front_status: 'open' }] }), 'cabinets[0].key');
  assertInvalid(await l.status({ cabinets: [], locker_info: { ip: 7 } }), 'locker_info.ip');
  assertInvalid(await l.status({ cabinets: [], event: {} }), 'event.type');
  assert.equal((await lockerRow(l))?.last_seen_at, null);
});
