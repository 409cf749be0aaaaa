// Every store event reaches the endpoints that take it: signed so that a receiver's own code can
// check it, in the payload of contract section 11, each step of a request once and in order.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { ann, bob, cfhClient, createRequest, iso, success } from '../cfh/support.ts';
import { makeWorld, provisionToken, withSecret, type TestContext, type World } from '../support/world.ts';
import { deliverNow, deliveriesOf, provisionEndpoint, Receiver, webhookApp, worldWithEndpoint } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await webhookApp({ clock: new ManualClock(new Date()) });
});

async function storeNumber(w: World, value: string): Promise<void> {
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, store_number: value }],
  });
}

test("a CFH request's steps arrive once each, in order, signed, in the payload of section 11", async (t) => {
  const { w, receiver, endpointId } = await worldWithEndpoint(ctx, t);
  await storeNumber(w, '010');
  const client = cfhClient(ctx.app, w.token);
  const created = ctx.clock.now();
  const record = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.advance(1_000);
  assert.equal(success(await client.claim(record.message_id, ann)), true);
  ctx.clock.advance(1_000);
  assert.equal(success(await client.onTheWay(record.message_id, ann)), true);
  ctx.clock.advance(1_000);
  assert.equal(success(await client.complete(record.message_id, 'helped', bob)), true);

  await deliverNow(ctx);
  assert.deepEqual(receiver.statuses(), ['created', 'claimed', 'on_the_way', 'completed']);
  for (const d of receiver.received) {
    assert.equal(d.signed, true, "the signature checks out with the receiver's own code");
    assert.equal(d.headers['content-type'], 'application/json');
    assert.equal(d.headers['x-event-id'], d.body.uuid);
    assert.match(String(d.headers['x-timestamp']), /^\d{10}$/);
    assert.ok(Math.abs(Number(d.headers['x-timestamp']) - ctx.clock.now().getTime() / 1000) <= 60, 'signed at the time of the attempt');
  }
  assert.equal(new Set(receiver.received.map((d) => d.body.uuid)).size, 4, 'four distinct events');
  assert.equal(receiver.connections, 1, 'the four went over one kept connection');
  assert.deepEqual(receiver.received[0]?.body, {
    uuid: receiver.received[0]?.body.uuid,
    type: 'callforhelp',
    status: 'created',
    created_at: iso(created),
    details: {
      type: 'api',
      name: null,
      option_text: 'Help',
      option_prompt: 'Someone is coming',
      message_id: record.message_id,
      claimed_by: null,
      request_from: null,
      staff_action: 'claim_and_on_the_way',
      reminder_count: null,
    },
    internal_location_id: w.locationId,
    internal_id: record.id,
    store_number: '010',
    organization_id: w.organizationId,
    message: 'Customer needs help: Someone is coming',
  });
  assert.deepEqual(Object.keys(receiver.received[0]?.body ?? {}), [
    'uuid',
    'type',
    'status',
    'created_at',
    'details',
    'internal_location_id',
    'internal_id',
    'store_number',
    'organization_id',
    'message',
  ]);
  const [logged] = await ctx.db.query<{ uuids: string[] }>('SELECT array_agg(uuid::text ORDER BY id) AS uuids FROM events WHERE organization_id = $1', [
    w.organizationId,
  ]);
  assert.deepEqual(
    receiver.received.map((d) => d.body.uuid),
    logged?.uuids,
    'the uuids of the event log',
  );

  // Nothing is sent twice, and W1 shows each delivered on its first attempt.
  await deliverNow(ctx);
  assert.equal(receiver.requests, 4);
  const deliveries = await deliveriesOf(ctx.app, await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']), endpointId);
  assert.deepEqual(
    deliveries.map((d) => [d.status, d.state, d.attempts.length, d.attempts[0]?.status_code]),
    [
      ['completed', 'delivered', 1, 200],
      ['on_the_way', 'delivered', 1, 200],
      ['claimed', 'delivered', 1, 200],
      ['created', 'delivered', 1, 200],
    ],
  );
});

test('locker steps arrive once each, in the order they happened', async (t) => {
  const { w, receiver } = await worldWithEndpoint(ctx, t);
  const order = await ctx.app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    payload: {
      rearload: false,
      locker_id: w.lockerId,
      cabinet_id: w.cabinetIds[0],
      order_id: 77,
      organization_id: w.organizationId,
      location_id: w.locationId,
    },
  });
  assert.equal(order.statusCode, 201, order.body);
  const { open_code: openCode, id: orderRowId } = order.json<{ open_code: string; id: number }>();
  const agree = await ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${openCode}`), payload: { command: 'agree' } });
  assert.equal(agree.statusCode, 200, agree.body);
  const closed = await ctx.app.inject({
    method: 'POST',
    url: '/api/lockers/cabinet/status',
    headers: { 'api-key': w.lockerKey },
    payload: { cabinets: [{ key: 1, front_status: 'closed', rear_status: 'closed' }] },
  });
  assert.equal(closed.statusCode, 200, closed.body);
  const done = await ctx.app.inject({ method: 'PUT', url: withSecret(`/api/lockers/orders/customer/${openCode}`) });
  assert.equal(done.statusCode, 200, done.body);

  await deliverNow(ctx);
  const logged = await ctx.db.query<{ status: string }>("SELECT status FROM events WHERE organization_id = $1 AND type = 'locker' ORDER BY id", [
    w.organizationId,
  ]);
  assert.deepEqual(
    receiver.statuses(),
    logged.map((e) => e.status),
    'every locker event once, in the order written',
  );
  const steps = ['order_created', 'cabinet_opened', 'cabinet_closed', 'order_completed'];
  assert.deepEqual(
    receiver.statuses().filter((s) => steps.includes(s)),
    steps,
  );
  assert.ok(receiver.received.every((d) => d.signed && d.body.type === 'locker'));
  const created = receiver.received[0]?.body as Record<string, unknown>;
  assert.equal(created.internal_id, orderRowId);
  assert.equal(created.store_number, null, 'a location without a store number');
  assert.deepEqual(created.details, { locker_id: w.lockerId, cabinet_id: w.cabinetIds[0], cabinet_key: 1, order_id: 77, id: orderRowId });
});

test('an endpoint gets only the types it takes, of its organization, and of its location when it has one', async (t) => {
  const { w, receiver } = await worldWithEndpoint(ctx, t, { events: ['locker'] });
  const other = await makeWorld(ctx.db, ctx.clock);
  const ofLocation = await Receiver.start(t);
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, locationId: w.locationId, url: ofLocation.url, secret: ofLocation.secret });
  const elsewhere = await Receiver.start(t);
  // A second location of the organization, and an endpoint of it only.
  const secondLocation = w.locationId + 500_000;
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id: secondLocation, organization_id: w.organizationId, name: 'Second store' }] });
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, locationId: secondLocation, url: elsewhere.url, secret: elsewhere.secret });

  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await createRequest(cfhClient(ctx.app, other.token), { location_id: other.locationId, option_id: other.optionId });
  const order = await ctx.app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    payload: { rearload: false, locker_id: w.lockerId, cabinet_id: w.cabinetIds[1], order_id: 5, organization_id: w.organizationId, location_id: w.locationId },
  });
  assert.equal(order.statusCode, 201, order.body);
  await deliverNow(ctx);
  assert.deepEqual(receiver.statuses(), ['order_created'], 'locker events only');
  assert.deepEqual(ofLocation.statuses(), ['created', 'order_created'], 'every type of its own location');
  assert.deepEqual(elsewhere.statuses(), [], 'nothing of another location');
});

test('an endpoint with an empty list of events receives nothing', async (t) => {
  const { w, receiver } = await worldWithEndpoint(ctx, t, { events: [] });
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  assert.equal(receiver.requests, 0);
});
