// The Call for Help workflow of version 2 (contract section 10): status, escalation, reminders,
// automatic completion, staff action `none`, outcomes, request_from aliases. Timers are durable
// jobs: the tests move the clock and run what is due.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import type { EventRow } from '../../src/events/log.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, eventKinds, iso, makeCfhWorld, success, type CfhSettings, type CfhWorld } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-08-03T10:00:00.000Z') });
});

async function world(settings: CfhSettings, opts: Parameters<typeof makeCfhWorld>[2] = {}) {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { ...opts, settings });
  const client = cfhClient(ctx.app, w.token);
  const create = async () =>
    (await client.create({ location_id: w.locationId, option_id: w.optionId })).json() as {
      id: number;
      message_id: string;
      status: string;
      is_closed: boolean;
      completion_reason: string | null;
    };
  const view = async (messageId: string) => (await client.track(messageId)).json().cfh_request;
  return { w, client, create, view };
}

async function at(ms: number): Promise<void> {
  ctx.clock.advance(ms);
  await ctx.scheduler.runDue();
}

function cfhEvents(w: CfhWorld, status?: string): Promise<EventRow[]> {
  return ctx.db.query<EventRow>(`SELECT * FROM events WHERE type = 'callforhelp' AND organization_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY id`, [
    w.organizationId,
    status ?? null,
  ]);
}

test('escalation: still unclaimed after cfh_escalation_seconds, the request is escalated and stays claimable', async () => {
  const { w, client, create, view } = await world({ cfh_escalation_seconds: 60, cfh_timeout_seconds: 300 });
  const created = ctx.clock.now();
  const { message_id } = await create();
  await at(59_999);
  assert.equal((await view(message_id)).status, 'created');
  await at(1);
  const escalated = await view(message_id);
  assert.deepEqual(
    [escalated.status, escalated.is_escalated, escalated.escalated_at, escalated.is_closed],
    ['escalated', true, iso(new Date(created.getTime() + 60_000)), false],
  );
  const [event] = await cfhEvents(w, 'escalated');
  assert.equal(event?.details.message_id, message_id);
  assert.equal(success(await client.claim(message_id, ann)), true, 'an escalated request is claimable');
  const claimed = await view(message_id);
  assert.deepEqual([claimed.status, claimed.is_escalated], ['claimed', true]);
  await at(300_000);
  assert.equal((await view(message_id)).status, 'claimed', 'a claimed request does not time out');
});

test('without an escalation of its own, a location escalates after CFH_ESCALATION_SECONDS (120)', async () => {
  const { create, view } = await world({ cfh_escalation_seconds: null, cfh_timeout_seconds: 600 });
  const { message_id } = await create();
  await at(119_000);
  assert.equal((await view(message_id)).is_escalated, false);
  await at(1_000);
  assert.equal((await view(message_id)).is_escalated, true);
});

test('a claimed request is never escalated', async () => {
  const { w, client, create, view } = await world({ cfh_escalation_seconds: 10 });
  const { message_id } = await create();
  await at(5_000);
  assert.equal(success(await client.claim(message_id, ann)), true);
  await at(10_000);
  assert.deepEqual([(await view(message_id)).is_escalated, (await cfhEvents(w, 'escalated')).length], [false, 0]);
});

test('reminders: every cfh_reminder_seconds while unclaimed, every cfh_reminder_claimed_seconds while claimed, never past the cap', async () => {
  const { w, client, create } = await world({
    cfh_reminder_seconds: 10,
    cfh_reminder_claimed_seconds: 30,
    cfh_reminder_cap_seconds: 100,
    cfh_timeout_seconds: 3600,
  });
  const { message_id } = await create();
  for (let i = 0; i < 3; i++) await at(10_000); // 10, 20, 30 s: three reminders while unclaimed
  assert.equal(success(await client.claim(message_id, ann)), true); // at 30 s
  for (let i = 0; i < 20; i++) await at(5_000); // to 130 s: claimed reminders at 60 and 90 s; 120 is past the cap of 100
  const reminders = await cfhEvents(w, 'reminder');
  assert.deepEqual(
    reminders.map((e) => e.details.reminder_count),
    [1, 2, 3, 4, 5],
  );
  const start = Date.parse(reminders[0]?.created_at ?? '') - 10_000;
  assert.deepEqual(
    reminders.map((e) => (Date.parse(e.created_at) - start) / 1000),
    [10, 20, 30, 60, 90],
  );
  assert.equal(reminders[3]?.details.claimed_by, 'Ann');
});

test('reminders are off by default, and stop when the employee is on the way', async () => {
  const off = await world({});
  await off.create();
  await at(600_000);
  assert.equal((await cfhEvents(off.w, 'reminder')).length, 0);

  const on = await world({ cfh_reminder_claimed_seconds: 10 });
  const { message_id } = await on.create();
  assert.equal(success(await on.client.claim(message_id, ann)), true);
  await at(10_000);
  assert.equal(success(await on.client.onTheWay(message_id, ann)), true);
  for (let i = 0; i < 5; i++) await at(10_000);
  assert.equal((await cfhEvents(on.w, 'reminder')).length, 1);
});

test('automatic completion: a claimed request not completed after cfh_auto_complete_seconds is completed with no_associate_feedback', async () => {
  const { w, client, create, view } = await world({ cfh_auto_complete_seconds: 50 });
  const { message_id } = await create();
  await at(5_000);
  const claimedAt = ctx.clock.now();
  assert.equal(success(await client.claim(message_id, ann)), true);
  await at(49_999);
  assert.equal((await view(message_id)).status, 'claimed');
  await at(1);
  const done = await view(message_id);
  assert.deepEqual([done.status, done.is_closed], ['completed', true]);
  const record = await client.cancel(message_id);
  assert.equal(record.statusCode, 409);
  const [event] = await cfhEvents(w, 'completed');
  assert.equal(event?.created_at, iso(new Date(claimedAt.getTime() + 50_000)));
  const [row] = await ctx.db.query<{ completion_reason: string }>('SELECT completion_reason FROM cfh_requests WHERE message_id = $1', [message_id]);
  assert.equal(row?.completion_reason, 'no_associate_feedback');
});

test('a completed request is not completed again automatically, and its timers are gone', async () => {
  const { w, client, create } = await world({ cfh_auto_complete_seconds: 50, cfh_escalation_seconds: 20, cfh_reminder_claimed_seconds: 10 });
  const { id, message_id } = await create();
  assert.equal(success(await client.claim(message_id, ann)), true);
  assert.equal(success(await client.complete(message_id, 'helped', ann)), true);
  const pending = await ctx.db.query("SELECT kind FROM jobs WHERE done_at IS NULL AND dedupe_key LIKE $1 AND kind <> 'cfh.reminder'", [`cfh:${id}:%`]);
  assert.deepEqual(pending, []);
  await at(100_000);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'claimed', 'completed']);
});

test('staff_action none: the request is recorded and closed at once as completed with reason recorded', async () => {
  const { w, create, view } = await world({ cfh_escalation_seconds: 10 }, { staffAction: 'none' });
  const record = await create();
  assert.deepEqual([record.status, record.is_closed, record.completion_reason], ['completed', true, 'recorded']);
  await at(600_000);
  assert.equal((await view(record.message_id)).status, 'completed');
  const events = await cfhEvents(w);
  assert.deepEqual(
    events.map((e) => [e.status, e.details.staff_action]),
    [
      ['created', 'none'],
      ['completed', 'none'],
    ],
  );
  const list = await ctx.app.inject({
    url: `/api/callforhelp/requests?location_id=${w.locationId}&state=all`,
    headers: { authorization: `Bearer ${w.token}` },
  });
  assert.equal(list.json()[0].staff_action, 'none');
});

test('outcomes: when the location has them, customer_status must be one of their keys (else 422, nothing changed)', async () => {
  const { w, client, create, view } = await world({}, { outcomes: ['sale', 'no_sale'] });
  const { message_id } = await create();
  const bad = await client.complete(message_id, 'helped', ann);
  assert.equal(bad.statusCode, 422, bad.body);
  assert.deepEqual(bad.json().errors, { customer_status: ['is not an outcome of this location'] });
  assert.equal((await view(message_id)).status, 'created');
  assert.equal(success(await client.complete(message_id, 'sale', ann)), true);
  const free = await world({});
  const other = await free.create();
  assert.equal(success(await free.client.complete(other.message_id, 'anything at all', ann)), true, 'without outcomes: free text');
  assert.ok(w.organizationId);
});

test('request_from aliases: microsoft, ringcentral and bluefletch are provider_a, _b and _c', async () => {
  const { w, client, create } = await world({});
  for (const [alias, provider] of [
    ['microsoft', 'provider_a'],
    ['ringcentral', 'provider_b'],
    ['bluefletch', 'provider_c'],
  ] as const) {
    const { message_id } = await create();
    assert.equal(success(await client.claim(message_id, { ...ann, request_from: alias })), true);
    const [event] = (await cfhEvents(w, 'claimed')).filter((e) => e.details.message_id === message_id);
    assert.equal(event?.details.request_from, provider);
  }
  const { message_id } = await create();
  assert.equal((await client.claim(message_id, { ...ann, request_from: 'teams' as 'radio' })).statusCode, 422);
});

test('the radio claims and goes through the use cases without a token, as request_from radio', async () => {
  const { w, create, view } = await world({});
  const { message_id } = await create();
  const deps = { db: ctx.db, clock: ctx.clock, timeoutSeconds: 300, escalationSeconds: 120 };
  const sam = { name: 'Sam', userId: 'Sam', channelId: w.edgeId, from: 'radio' as const };
  const { claimRequest, markOnTheWay } = await import('../../src/cfh/requests.ts');
  const { deviceActor } = await import('../../src/access/actor.ts');
  const edge = (locationId: number) => deviceActor('edge_device', w.edgeId, { organizationId: w.organizationId, locationId });
  assert.equal(await claimRequest(deps, edge(w.locationId), message_id, sam), true);
  assert.equal(await markOnTheWay(deps, edge(w.locationId), message_id, sam), true);
  assert.equal((await view(message_id)).status, 'on_the_way');
  const events = await cfhEvents(w);
  assert.deepEqual(
    events.map((e) => [e.status, e.details.request_from, e.details.claimed_by]),
    [
      ['created', null, null],
      ['claimed', 'radio', 'Sam'],
      ['on_the_way', 'radio', 'Sam'],
    ],
  );
  await assert.rejects(claimRequest(deps, edge(w.locationId + 1), message_id, sam), /not found/);
});

test('the timers are kept in the database: an instance started later runs each once', async (t) => {
  const { w, create, view } = await world({ cfh_escalation_seconds: 10, cfh_reminder_seconds: 10, cfh_reminder_cap_seconds: 10, cfh_timeout_seconds: 20 });
  const { id, message_id } = await create();
  const later = new ManualClock(new Date(ctx.clock.now().getTime() + 60_000));
  const [b, c] = [await testApp({ t, clock: later }), await testApp({ t, clock: later })];
  // One instance catching up runs the due timers in due order; the others then find nothing to do.
  await b.scheduler.runDue();
  await Promise.all([c.scheduler.runDue(), ctx.scheduler.runDue()]);
  const done = await view(message_id);
  assert.deepEqual([done.status, done.is_escalated], ['timed_out', true]);
  assert.deepEqual((await cfhEvents(w)).map((e) => e.status).sort(), ['created', 'escalated', 'reminder', 'timed_out']);
  const ran = await ctx.db.query<{ attempts: number }>('SELECT attempts FROM jobs WHERE dedupe_key LIKE $1 AND attempts > 0', [`cfh:${id}:%`]);
  assert.equal(ran.length, 3, 'escalation, reminder and timeout ran');
  assert.ok(
    ran.every((j) => j.attempts === 1),
    'each ran once',
  );
});
