import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { listEvents } from '../../src/cfh/store.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { ann, bob, cfhClient, createRequest, eventKinds, iso, ISO_MICROS, makeCfhWorld, seconds, SQL_SECONDS, success, worldWithClient } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-03-02T10:00:00.250Z') });
});

test('a kiosk creates a request and gets the whole record, in the wire formats', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const created = ctx.clock.now();
  const res = await client.create({
    location_id: w.locationId,
    option_id: w.optionId,
    device_id: 7,
    display_id: w.displayId,
    callbutton_id: w.buttonId,
    chat_channel_id: 'C-floor',
  });
  assert.equal(res.statusCode, 201, res.body);
  const record = res.json();
  assert.deepEqual(Object.keys(record).sort(), [
    'callbutton_id',
    'chat_channel_id',
    'claimed_at',
    'claimed_by',
    'closed_at',
    'completed_at',
    'completion_reason',
    'created_at',
    'customer_canceled_at',
    'device_id',
    'display_id',
    'escalated_at',
    'id',
    'is_canceled',
    'is_claimed',
    'is_closed',
    'is_completed',
    'is_escalated',
    'is_on_the_way',
    'is_timeout',
    'location_id',
    'message_id',
    'option_id',
    'organization_id',
    'source',
    'staff_on_the_way_at',
    'status',
    'teams_channel_id',
    'timeout_at',
    'updated_at',
  ]);
  assert.equal(typeof record.id, 'number');
  assert.match(record.message_id, /^[A-Za-z0-9_-]{22,}$/);
  assert.deepEqual(
    { ...record, id: 0, message_id: '' },
    {
      id: 0,
      message_id: '',
      device_id: 7,
      display_id: w.displayId,
      callbutton_id: w.buttonId,
      chat_channel_id: 'C-floor',
      organization_id: w.organizationId,
      location_id: w.locationId,
      option_id: w.optionId,
      is_claimed: false,
      claimed_at: null,
      claimed_by: null,
      is_timeout: false,
      timeout_at: null,
      is_closed: false,
      closed_at: null,
      is_on_the_way: false,
      staff_on_the_way_at: null,
      completed_at: null,
      is_completed: 0,
      completion_reason: null,
      is_canceled: false,
      customer_canceled_at: null,
      created_at: iso(created),
      updated_at: iso(created),
      status: 'created',
      is_escalated: false,
      escalated_at: null,
      source: 'api',
      teams_channel_id: 'C-floor',
    },
  );
  assert.match(record.created_at, ISO_MICROS);
});

test('optional ids may be left out, and every request gets its own message_id', async () => {
  const { w, client } = await worldWithClient(ctx);
  const a = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const b = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.notEqual(a.message_id, b.message_id);
  for (const field of ['device_id', 'display_id', 'callbutton_id', 'chat_channel_id']) assert.equal(a[field], null, field);
});

test('claimed, on the way and completed: each step shows in the status view the customer polls', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId, device_id: 7 });
  const created = ctx.clock.now();

  const fresh = await client.track(message_id);
  assert.equal(fresh.statusCode, 200, fresh.body);
  assert.deepEqual(fresh.json(), {
    device_id: 7,
    option: {
      id: w.optionId,
      text_en: 'Help',
      text_fr: 'Aide',
      prompt_en: 'Someone is coming',
      prompt_fr: "Quelqu'un arrive",
      organization_id: w.organizationId,
      location_id: w.locationId,
      created_at: iso(created),
      updated_at: iso(created),
    },
    location_id: w.locationId,
    message_id,
    cfh_request: {
      option_id: w.optionId,
      is_claimed: false,
      claimed_at: null,
      claimed_by: null,
      location_id: w.locationId,
      organization_id: w.organizationId,
      created_at: iso(created),
      updated_at: iso(created),
      is_timeout: false,
      timeout_at: null,
      is_closed: false,
      closed_at: null,
      is_on_the_way: false,
      staff_on_the_way_at: null,
      is_canceled: false,
      customer_canceled_at: null,
      employee_has_arrived: false,
      employee_arrived_at: null,
      status: 'created',
      is_escalated: false,
      escalated_at: null,
      source: 'api',
      teams_channel_id: null,
    },
    show_survey: false,
  });

  ctx.clock.advance(15_000);
  const claimedAt = ctx.clock.now();
  assert.equal(success(await client.claim(message_id, ann)), true);
  let view = (await client.track(message_id)).json();
  assert.equal(view.cfh_request.is_claimed, true);
  assert.equal(view.cfh_request.claimed_at, iso(claimedAt));
  assert.equal(view.cfh_request.claimed_by, 'Ann');
  assert.equal(view.cfh_request.employee_has_arrived, false);

  ctx.clock.advance(5_000);
  const goingAt = ctx.clock.now();
  assert.equal(success(await client.onTheWay(message_id, ann)), true);
  view = (await client.track(message_id)).json();
  assert.equal(view.cfh_request.is_on_the_way, true);
  assert.equal(view.cfh_request.staff_on_the_way_at, iso(goingAt));
  assert.equal(view.cfh_request.employee_has_arrived, true);
  assert.equal(view.cfh_request.employee_arrived_at, iso(goingAt));
  assert.equal(view.show_survey, false);

  ctx.clock.advance(60_000);
  const completedAt = ctx.clock.now();
  assert.equal(success(await client.complete(message_id, 'not_interested', ann)), true);
  view = (await client.track(message_id)).json();
  assert.equal(view.cfh_request.is_closed, true);
  assert.equal(view.cfh_request.closed_at, seconds(completedAt));
  assert.match(view.cfh_request.closed_at, SQL_SECONDS);
  assert.equal(view.cfh_request.updated_at, iso(completedAt));
  assert.equal(view.show_survey, true);

  const events = await listEvents(ctx.db, w.organizationId, message_id);
  assert.deepEqual(
    events.map((e) => [e.kind, e.at]),
    [
      ['created', iso(created)],
      ['claimed', iso(claimedAt)],
      ['on_the_way', iso(goingAt)],
      ['completed', iso(completedAt)],
    ],
  );
});

test('completion sets is_completed 1, completed_at, completion_reason, is_closed and closed_at', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.claim(message_id)), true);
  ctx.clock.advance(1_234);
  const completedAt = ctx.clock.now();
  assert.equal(success(await client.complete(message_id, 'helped_customer')), true);
  const [row] = await ctx.db.query<Record<string, unknown>>(
    'SELECT is_completed, completed_at, completion_reason, is_closed, closed_at FROM cfh_requests WHERE message_id = $1',
    [message_id],
  );
  assert.deepEqual(row, {
    is_completed: true,
    completed_at: iso(completedAt),
    completion_reason: 'helped_customer',
    is_closed: true,
    closed_at: iso(completedAt),
  });
  // No operation returns the record of a completed request (C4 answers 409); the view shows it.
  const view = (await client.track(message_id)).json();
  assert.equal(view.cfh_request.closed_at, seconds(completedAt));
});

test('a closed request refuses claim, on-the-way and complete with success false, and stays as it was', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.complete(message_id, 'not_interested', bob)), true);
  const before = (await client.track(message_id)).json();
  ctx.clock.advance(1_000);
  assert.equal(success(await client.claim(message_id, ann)), false);
  assert.equal(success(await client.onTheWay(message_id, ann)), false);
  assert.equal(success(await client.complete(message_id, 'again', ann)), false);
  assert.deepEqual((await client.track(message_id)).json(), before);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'completed']);
});

test('a claimed request cannot be claimed again, not even by its claimer', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.claim(message_id, ann)), true);
  assert.equal(success(await client.claim(message_id, bob)), false);
  assert.equal(success(await client.claim(message_id, ann)), false);
  assert.equal((await client.track(message_id)).json().cfh_request.claimed_by, 'Ann');
});

test('on the way is for the claimer only; another employee is refused', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.claim(message_id, ann)), true);
  assert.equal(success(await client.onTheWay(message_id, bob)), false);
  // The same user id at another provider is another person.
  assert.equal(success(await client.onTheWay(message_id, { ...ann, claimed_by: 'Ann', request_from: 'provider_c' })), false);
  assert.equal((await client.track(message_id)).json().cfh_request.is_on_the_way, false);
  assert.equal(success(await client.onTheWay(message_id, ann)), true);
});

test('on the way on an unclaimed request claims it for that employee', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.advance(3_000);
  const at = ctx.clock.now();
  assert.equal(success(await client.onTheWay(message_id, bob)), true);
  const view = (await client.track(message_id)).json().cfh_request;
  assert.deepEqual([view.is_claimed, view.claimed_by, view.claimed_at, view.is_on_the_way, view.staff_on_the_way_at], [true, 'Bob', iso(at), true, iso(at)]);
  assert.equal(success(await client.claim(message_id, ann)), false);
  assert.equal(success(await client.onTheWay(message_id, ann)), false);
  const events = await listEvents(ctx.db, w.organizationId, message_id);
  assert.deepEqual(
    events.map((e) => [e.kind, e.actor_name, e.actor_user_id, e.request_from, e.channel_id]),
    [
      ['created', null, null, null, null],
      ['claimed', 'Bob', 'U-bob', 'provider_b', 'C-floor'],
      ['on_the_way', 'Bob', 'U-bob', 'provider_b', 'C-floor'],
    ],
  );
});

test('on the way again by the claimer succeeds and keeps the first time', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const first = ctx.clock.now();
  assert.equal(success(await client.onTheWay(message_id, ann)), true);
  ctx.clock.advance(10_000);
  assert.equal(success(await client.onTheWay(message_id, ann)), true);
  assert.equal((await client.track(message_id)).json().cfh_request.staff_on_the_way_at, iso(first));
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'claimed', 'on_the_way']);
});

test('every step is an event: who, when, from which provider, with which token', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.claim(message_id, { ...ann, request_from: 'web_interface' })), true);
  assert.equal(success(await client.onTheWay(message_id, { ...ann, request_from: 'web_interface' })), true);
  assert.equal(success(await client.complete(message_id, 'found_item', { ...ann, channel_id: 'C-other', request_from: 'web_interface' })), true);
  const [token] = await ctx.db.query<{ id: number }>('SELECT id FROM api_tokens WHERE organization_id = $1', [w.organizationId]);
  const events = await listEvents(ctx.db, w.organizationId, message_id);
  assert.deepEqual(
    events.map((e) => ({ ...e, at: undefined })),
    [
      { kind: 'created', at: undefined, token_id: token?.id, actor_name: null, actor_user_id: null, channel_id: null, request_from: null, detail: null },
      {
        kind: 'claimed',
        at: undefined,
        token_id: token?.id,
        actor_name: 'Ann',
        actor_user_id: 'U-ann',
        channel_id: 'C-floor',
        request_from: 'web_interface',
        detail: null,
      },
      {
        kind: 'on_the_way',
        at: undefined,
        token_id: token?.id,
        actor_name: 'Ann',
        actor_user_id: 'U-ann',
        channel_id: 'C-floor',
        request_from: 'web_interface',
        detail: null,
      },
      {
        kind: 'completed',
        at: undefined,
        token_id: token?.id,
        actor_name: 'Ann',
        actor_user_id: 'U-ann',
        channel_id: 'C-other',
        request_from: 'web_interface',
        detail: 'found_item',
      },
    ],
  );
});

test('request_from defaults to provider_a', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.claim(message_id, ann)), true);
  const events = await listEvents(ctx.db, w.organizationId, message_id);
  assert.equal(events[1]?.request_from, 'provider_a');
});

test('an unknown message_id is 404 on every operation', async () => {
  const { client } = await worldWithClient(ctx);
  for (const res of [
    await client.claim('no-such-request'),
    await client.onTheWay('no-such-request'),
    await client.complete('no-such-request'),
    await client.cancel('no-such-request'),
    await client.track('no-such-request'),
  ]) {
    assert.equal(res.statusCode, 404, res.body);
    assert.deepEqual(res.json(), { message: 'CFH request not found', code: 'not_found' });
  }
});
