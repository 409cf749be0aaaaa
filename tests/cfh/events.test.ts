// The event log of Call for Help (contract section 11): each status a request reaches is one
// `callforhelp` event in the CFH form, written with the change; a refused step writes none.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import type { EventRow } from '../../src/events/log.ts';
import { testApp, type TestContext, type World } from '../support/world.ts';
import { ann, bob, createRequest, iso, success, type CfhClient, type Employee, worldWithClient } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-06-01T12:00:00.125Z') });
});

/** The world's events, oldest first (every world is an organization of its own). */
function eventsOf(w: World): Promise<EventRow[]> {
  return ctx.db.query<EventRow>(
    `SELECT id, uuid, type, status, organization_id, location_id, internal_id, details, message, created_at
     FROM events WHERE organization_id = $1 ORDER BY id`,
    [w.organizationId],
  );
}

async function open(w: World, client: CfhClient): Promise<{ id: number; message_id: string }> {
  const record = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  return { id: record.id as number, message_id: record.message_id };
}

/** The details of the CFH form, as makeWorld's option ("Help" / "Someone is coming") gives them. */
function form(message_id: string, claimed_by: string | null, request_from: string | null) {
  return {
    type: 'api',
    name: null,
    option_text: 'Help',
    option_prompt: 'Someone is coming',
    message_id,
    claimed_by,
    request_from,
    staff_action: 'claim_and_on_the_way',
    reminder_count: null,
  };
}

test('created, claimed, on the way and completed: one event each, in the CFH form, at the time of the step', async () => {
  const { w, client } = await worldWithClient(ctx);
  const created = ctx.clock.now();
  const { id, message_id } = await open(w, client);
  ctx.clock.advance(10_000);
  const claimed = ctx.clock.now();
  assert.equal(success(await client.claim(message_id, ann)), true);
  ctx.clock.advance(5_000);
  const going = ctx.clock.now();
  assert.equal(success(await client.onTheWay(message_id, ann)), true);
  ctx.clock.advance(60_000);
  const completed = ctx.clock.now();
  assert.equal(success(await client.complete(message_id, 'helped', bob)), true);

  const events = await eventsOf(w);
  assert.deepEqual(
    events.map((e) => ({ ...e, id: 0, uuid: '' })),
    [
      ['created', created, 'Customer needs help: Someone is coming', form(message_id, null, null)],
      ['claimed', claimed, 'Ann claimed: Someone is coming', form(message_id, 'Ann', 'provider_a')],
      ['on_the_way', going, 'Ann is on the way: Someone is coming', form(message_id, 'Ann', 'provider_a')],
      ['completed', completed, 'Bob completed: Someone is coming', form(message_id, 'Ann', 'provider_b')],
    ].map(([status, at, message, details]) => ({
      id: 0,
      uuid: '',
      type: 'callforhelp',
      status,
      organization_id: w.organizationId,
      location_id: w.locationId,
      internal_id: String(id),
      details,
      message,
      created_at: iso(at as Date),
    })),
  );
  assert.equal(new Set(events.map((e) => e.uuid)).size, events.length, 'every event has its own uuid');
});

test('a cancel writes "cancelled" (the contract\'s spelling); cancelling again writes nothing', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { id, message_id } = await open(w, client);
  assert.equal(success(await client.claim(message_id, ann)), true);
  ctx.clock.advance(3_000);
  const cancelledAt = ctx.clock.now();
  assert.equal((await client.cancel(message_id)).statusCode, 200);
  ctx.clock.advance(3_000);
  assert.equal((await client.cancel(message_id)).statusCode, 200);

  const events = await eventsOf(w);
  assert.deepEqual(
    events.map((e) => e.status),
    ['created', 'claimed', 'cancelled'],
  );
  const cancelled = events[2];
  assert.deepEqual(
    [cancelled?.internal_id, cancelled?.message, cancelled?.created_at],
    [String(id), 'The customer cancelled: Someone is coming', iso(cancelledAt)],
  );
  assert.deepEqual(cancelled?.details, form(message_id, 'Ann', null));
});

test('the timeout writes "timed_out" at the deadline, once, from the job', async () => {
  const { w, client } = await worldWithClient(ctx, { cfhTimeoutSeconds: 2 });
  const created = ctx.clock.now();
  const { id, message_id } = await open(w, client);
  ctx.clock.advance(2_500);
  await ctx.scheduler.runDue();
  await ctx.scheduler.runDue();

  const events = await eventsOf(w);
  assert.deepEqual(
    events.map((e) => e.status),
    ['created', 'timed_out'],
  );
  const timedOut = events[1];
  assert.deepEqual(
    [timedOut?.internal_id, timedOut?.location_id, timedOut?.message, timedOut?.created_at],
    [String(id), w.locationId, 'Nobody claimed in time: Someone is coming', iso(new Date(created.getTime() + 2_000))],
  );
  assert.deepEqual(timedOut?.details, form(message_id, null, null));
});

test('on the way on an unclaimed request writes claimed and on_the_way; repeating it writes nothing', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await open(w, client);
  assert.equal(success(await client.onTheWay(message_id, bob)), true);
  ctx.clock.advance(1_000);
  assert.equal(success(await client.onTheWay(message_id, bob)), true);

  const events = await eventsOf(w);
  assert.deepEqual(
    events.map((e) => [e.status, e.message, e.details.claimed_by, e.details.request_from]),
    [
      ['created', 'Customer needs help: Someone is coming', null, null],
      ['claimed', 'Bob claimed: Someone is coming', 'Bob', 'provider_b'],
      ['on_the_way', 'Bob is on the way: Someone is coming', 'Bob', 'provider_b'],
    ],
  );
});

test('refused steps write no event', async () => {
  const { w, client } = await worldWithClient(ctx);
  const other: Employee = { channel_id: 'C-floor', claimed_by: 'Cy', claimed_by_user_id: 'U-cy' };

  const completedOne = await open(w, client);
  assert.equal(success(await client.claim(completedOne.message_id, ann)), true);
  assert.equal(success(await client.claim(completedOne.message_id, bob)), false, 'a claim that lost');
  assert.equal(success(await client.onTheWay(completedOne.message_id, other)), false, 'on the way by another employee');
  assert.equal(success(await client.complete(completedOne.message_id, 'helped', ann)), true);
  assert.equal(success(await client.complete(completedOne.message_id, 'helped', ann)), false, 'a complete of a closed request');
  assert.equal(success(await client.claim(completedOne.message_id, bob)), false, 'a claim of a closed request');
  assert.equal(success(await client.onTheWay(completedOne.message_id, ann)), false, 'on the way on a closed request');
  assert.equal((await client.cancel(completedOne.message_id)).statusCode, 409, 'a cancel of a completed request');

  const cancelledOne = await open(w, client);
  assert.equal((await client.cancel(cancelledOne.message_id)).statusCode, 200);
  assert.equal((await client.cancel(cancelledOne.message_id)).statusCode, 200, 'a cancel of a cancelled request');
  assert.equal(success(await client.complete(cancelledOne.message_id, 'helped', ann)), false, 'a complete of a cancelled request');

  assert.equal((await client.create({ location_id: w.locationId, option_id: w.optionId + 1 })).statusCode, 422, 'a create that failed its checks');
  assert.equal((await client.claim('no-such-request', ann)).statusCode, 404);

  const events = await eventsOf(w);
  assert.deepEqual(
    events.map((e) => [e.internal_id, e.status]),
    [
      [String(completedOne.id), 'created'],
      [String(completedOne.id), 'claimed'],
      [String(completedOne.id), 'completed'],
      [String(cancelledOne.id), 'created'],
      [String(cancelledOne.id), 'cancelled'],
    ],
  );
});

test("of concurrent claims only the winner's is an event", async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await open(w, client);
  const employees = Array.from({ length: 10 }, (_, i): Employee => ({ channel_id: 'C-floor', claimed_by: `Employee ${i}`, claimed_by_user_id: `U-${i}` }));
  const results = await Promise.all(employees.map((e) => client.claim(message_id, e)));
  const winners = results.flatMap((res, i) => (success(res) ? [employees[i]?.claimed_by] : []));
  assert.equal(winners.length, 1);

  const claims = (await eventsOf(w)).filter((e) => e.status === 'claimed');
  assert.deepEqual(
    claims.map((e) => e.details.claimed_by),
    winners,
  );
});
