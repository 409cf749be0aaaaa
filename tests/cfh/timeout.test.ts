import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { makeWorld, testApp, testConfig, type TestContext, type World } from '../support/world.ts';
import { ann, cfhClient, createRequest, eventKinds, iso, success, type CfhClient } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-05-20T08:00:00.500Z') });
});

async function store(timeoutSeconds: number | undefined, c: TestContext = ctx): Promise<{ w: World; client: CfhClient }> {
  const w = await makeWorld(c.db, c.clock, { cfhTimeoutSeconds: timeoutSeconds });
  return { w, client: cfhClient(c.app, w.token) };
}

async function cfhRequest(client: CfhClient, message_id: string) {
  const res = await client.track(message_id);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().cfh_request;
}

test("an unclaimed request times out after its location's 2 seconds and is closed: no longer claimable (version 2)", async () => {
  const { w, client } = await store(2);
  const created = ctx.clock.now();
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });

  ctx.clock.advance(1_999);
  await ctx.scheduler.runDue();
  assert.equal((await cfhRequest(client, message_id)).is_timeout, false, 'not before its time');

  ctx.clock.advance(1);
  await ctx.scheduler.runDue();
  const timedOut = await cfhRequest(client, message_id);
  const deadline = iso(new Date(created.getTime() + 2_000));
  assert.equal(timedOut.is_timeout, true);
  assert.equal(timedOut.timeout_at, deadline);
  assert.equal(timedOut.updated_at, deadline);
  assert.equal(timedOut.is_closed, true);
  assert.equal(timedOut.closed_at, deadline.slice(0, 19).replace('T', ' '));
  assert.equal(timedOut.is_claimed, false);
  assert.equal(timedOut.status, 'timed_out');

  ctx.clock.advance(30_000);
  assert.equal(success(await client.claim(message_id, ann)), false, 'a timed-out request is archived: claim is refused');
  assert.equal(success(await client.onTheWay(message_id, ann)), false);
  const after = await cfhRequest(client, message_id);
  assert.deepEqual([after.is_claimed, after.status], [false, 'timed_out']);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'timed_out']);
});

test('a claim before the timeout prevents it', async () => {
  const { w, client } = await store(2);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.advance(1_000);
  assert.equal(success(await client.claim(message_id, ann)), true);
  ctx.clock.advance(60_000);
  await ctx.scheduler.runDue();
  const view = await cfhRequest(client, message_id);
  assert.deepEqual([view.is_timeout, view.timeout_at], [false, null]);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'claimed']);
});

test('a request closed before its deadline never times out', async () => {
  const { w, client } = await store(2);
  const canceled = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const completed = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.advance(500);
  assert.equal((await client.cancel(canceled.message_id)).statusCode, 200);
  assert.equal(success(await client.complete(completed.message_id)), true);
  ctx.clock.advance(10_000);
  await ctx.scheduler.runDue();
  assert.equal((await cfhRequest(client, canceled.message_id)).is_timeout, false);
  assert.equal((await cfhRequest(client, completed.message_id)).is_timeout, false);
});

test('a timeout that runs late stamps its deadline, and a claim that came first wins', async () => {
  const { w, client } = await store(2);
  const created = ctx.clock.now();
  const late = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const claimedFirst = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  // Nobody ran the scheduler for 5 seconds (the service was down); one claim came after the deadline.
  ctx.clock.advance(5_000);
  assert.equal(success(await client.claim(claimedFirst.message_id, ann)), true);
  await ctx.scheduler.runDue();
  const timedOut = await cfhRequest(client, late.message_id);
  assert.deepEqual([timedOut.is_timeout, timedOut.timeout_at, timedOut.status], [true, iso(new Date(created.getTime() + 2_000)), 'timed_out']);
  const claimed = await cfhRequest(client, claimedFirst.message_id);
  assert.deepEqual([claimed.is_timeout, claimed.is_closed, claimed.status], [false, false, 'claimed'], 'a claimed request does not time out');
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, claimedFirst.message_id), ['created', 'claimed']);
});

test('the timeout is kept in the database: another instance started later runs it', async (t) => {
  const { w, client } = await store(2);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const other = await testApp({ t, clock: new ManualClock(new Date(ctx.clock.now().getTime() + 2_000)) });
  await other.scheduler.runDue();
  assert.equal((await cfhRequest(client, message_id)).is_timeout, true);
});

test('without a timeout of its own, a location uses CFH_TIMEOUT_SECONDS', async (t) => {
  const c = await testApp({ t, clock: new ManualClock(ctx.clock.now()), config: testConfig({ CFH_TIMEOUT_SECONDS: '30' }) });
  const { w, client } = await store(undefined, c);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  c.clock.advance(29_999);
  await c.scheduler.runDue();
  assert.equal((await cfhRequest(client, message_id)).is_timeout, false);
  c.clock.advance(1);
  await c.scheduler.runDue();
  assert.equal((await cfhRequest(client, message_id)).is_timeout, true);
});
