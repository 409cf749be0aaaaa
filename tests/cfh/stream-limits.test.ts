// Live streams opened with only a request's message_id (C6 without a token) are bounded on their own,
// far below the streams of credentials: a client without credentials cannot take the slots a store's
// consoles and phones behind the same address need. A closed request's stream ends.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { STREAM_LIMITS } from '../../src/live/streams.ts';
import { openSse } from '../support/sse.ts';
import { testApp, type Teardown } from '../support/world.ts';
import { cfhClient, makeCfhWorld } from './support.ts';

async function listening(t: Teardown) {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const staff = cfhClient(ctx.app, w.token);
  const newRequest = async () => (await staff.create({ location_id: w.locationId, option_id: w.optionId })).json<{ message_id: string }>().message_id;
  const base = `http://127.0.0.1:${port}`;
  const tracking = (messageId: string) => `${base}/api/callforhelp/v1/tracking/stream?message_id=${messageId}`;
  const location = `${base}/api/callforhelp/requests/stream?location_id=${w.locationId}`;
  return { ...ctx, w, staff, newRequest, tracking, location };
}

async function refusedForTooMany(res: Response): Promise<void> {
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '30');
  assert.equal(((await res.json()) as { code: string }).code, 'too_many_streams');
}

async function endsSoon(ended: Promise<void>): Promise<void> {
  const late = new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5_000).unref());
  assert.notEqual(await Promise.race([ended, late]), 'open', 'the service ended the stream');
}

test("one message_id opens a few customer streams, not more; the store's token streams from the same address still open", async (t) => {
  const s = await listening(t);
  const messageId = await s.newRequest();
  for (let i = 0; i < STREAM_LIMITS.perCapability; i++) assert.equal((await openSse(t, s.tracking(messageId))).status, 200);
  await refusedForTooMany(await fetch(s.tracking(messageId)));
  const bearer = { authorization: `Bearer ${s.w.token}` };
  assert.equal((await openSse(t, s.tracking(messageId), bearer)).status, 200, 'C6 with a token is not a capability stream');
  assert.equal((await openSse(t, s.location, bearer)).status, 200, 'C8 opens');
});

test("customer streams of one address stop at their bound, far below the address's room for credentials", async (t) => {
  const s = await listening(t);
  assert.ok(STREAM_LIMITS.capabilityPerClient * 10 <= STREAM_LIMITS.perClient);
  const requests = Math.ceil(STREAM_LIMITS.capabilityPerClient / STREAM_LIMITS.perCapability);
  let opened = 0;
  for (let r = 0; r < requests; r++) {
    const messageId = await s.newRequest();
    for (let i = 0; i < STREAM_LIMITS.perCapability && opened < STREAM_LIMITS.capabilityPerClient; i++, opened++)
      assert.equal((await openSse(t, s.tracking(messageId))).status, 200);
  }
  await refusedForTooMany(await fetch(s.tracking(await s.newRequest())));
  const location = await openSse(t, s.location, { authorization: `Bearer ${s.w.token}` });
  assert.equal(location.status, 200, "the store's stream opens beside them");
});

test("a customer's stream ends once the request is closed, after its last status; a closed request's stream ends at once", async (t) => {
  const s = await listening(t);
  const messageId = await s.newRequest();
  const stream = await openSse(t, s.tracking(messageId));
  assert.equal(JSON.parse((await stream.next('status')).data).cfh_request.status, 'created');
  assert.equal((await s.staff.cancel(messageId)).statusCode, 200);
  const last = JSON.parse((await stream.next('status')).data);
  assert.deepEqual([last.cfh_request.status, last.cfh_request.is_closed], ['cancelled', true]);
  await endsSoon(stream.ended);
  for (let i = 0; i < 200 && s.live.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(s.live.size, 0, 'the slot is free again');

  const again = await openSse(t, s.tracking(messageId));
  assert.equal(JSON.parse((await again.next('status')).data).cfh_request.status, 'cancelled');
  await endsSoon(again.ended);
});

test("an integration's stream (a token) of a closed request stays open", async (t) => {
  const s = await listening(t);
  const messageId = await s.newRequest();
  assert.equal((await s.staff.cancel(messageId)).statusCode, 200);
  const stream = await openSse(t, s.tracking(messageId), { authorization: `Bearer ${s.w.token}` });
  assert.equal(JSON.parse((await stream.next('status')).data).cfh_request.status, 'cancelled');
  const late = new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 500).unref());
  assert.equal(await Promise.race([stream.ended.then(() => 'ended'), late]), 'open');
});
