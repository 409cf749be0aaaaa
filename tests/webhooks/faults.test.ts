// Receivers that misbehave (500, a hang, a reset connection, a redirect, a huge body) never hurt
// the service: their deliveries are retried with backoff for a day, then failed, every attempt
// visible in W1; and a slow endpoint delays no other endpoint and no request.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { makeWorld, type Teardown, type TestContext } from '../support/world.ts';
import { deliveriesOf, fanOut, provisionEndpoint, Receiver, webhookApp, type Behaviour, type DeliveryView, worldWithEndpoint } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await webhookApp({ clock: new ManualClock(new Date()) });
});

const HOUR = 60 * 60_000;

/** The one delivery of an endpoint, as W1 shows it. */
async function onlyDelivery(token: string, endpointId: number): Promise<DeliveryView> {
  const [delivery, ...more] = await deliveriesOf(ctx.app, token, endpointId);
  assert.ok(delivery !== undefined && more.length === 0, 'one delivery');
  return delivery;
}

/**
 * Makes one event, attempts it, checks the first retry comes within 30 s, then moves the clock an
 * hour at a time until the delivery is settled; returns it as W1 shows it.
 */
async function retriedUntilSettled(t: Teardown, behaviour: Behaviour, deliverer: WebhookDeliverer = ctx.webhooks) {
  const { w, receiver, endpointId, token } = await worldWithEndpoint(ctx, t, { behaviour });
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await fanOut(ctx);
  await deliverer.runDue();
  const first = await onlyDelivery(token, endpointId);
  assert.equal(first.state, 'pending');
  assert.equal(first.attempts.length, 1);
  const firstAt = Date.parse(first.attempts[0]?.at ?? '');
  assert.ok(Date.parse(first.next_attempt_at ?? '') - firstAt <= 30_000, 'the first retry comes within 30 s');

  ctx.clock.advance(30_000);
  await deliverer.runDue();
  assert.equal((await onlyDelivery(token, endpointId)).attempts.length, 2, 'retried');
  for (let hours = 0; hours < 30; hours++) {
    ctx.clock.advance(HOUR);
    await deliverer.runDue();
    const d = await onlyDelivery(token, endpointId);
    if (d.state !== 'pending') {
      const lastAt = Date.parse(d.attempts.at(-1)?.at ?? '');
      assert.ok(lastAt - firstAt >= 24 * HOUR, 'retried for at least 24 hours');
      assert.equal(d.next_attempt_at, null);
      assert.equal(receiver.requests, d.attempts.length, 'each attempt reached the receiver');
      return d;
    }
  }
  assert.fail('the delivery was still pending after 30 hours');
}

test('a receiver that answers 500 is retried with backoff for a day, then failed; W1 shows every attempt', async (t) => {
  const d = await retriedUntilSettled(t, 'status500');
  assert.equal(d.state, 'failed');
  assert.ok(d.attempts.length >= 20, `${d.attempts.length} attempts`);
  assert.ok(d.attempts.length <= 40, `${d.attempts.length} attempts: the backoff grows`);
  for (const a of d.attempts) {
    assert.equal(a.status_code, 500);
    assert.equal(a.error, null);
    assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0);
  }
  const gaps = d.attempts.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(d.attempts[i]?.at ?? ''));
  assert.ok(
    gaps.every((g) => g > 0),
    'attempts are apart',
  );
});

test('a connection reset is a failed attempt without a status', async (t) => {
  const d = await retriedUntilSettled(t, 'reset');
  assert.equal(d.state, 'failed');
  assert.ok(
    d.attempts.every((a) => a.status_code === null && typeof a.error === 'string' && a.error.length > 0),
    JSON.stringify(d.attempts[0]),
  );
});

test('a redirect is not followed: the attempt failed with its status', async (t) => {
  const d = await retriedUntilSettled(t, 'redirect');
  assert.equal(d.state, 'failed');
  assert.ok(d.attempts.every((a) => a.status_code === 302 && /redirects are not followed/.test(a.error ?? '')));
});

test('a huge answer is read only up to the cap and fails the attempt', async (t) => {
  const d = await retriedUntilSettled(t, 'huge');
  assert.equal(d.state, 'failed');
  assert.ok(
    d.attempts.every((a) => a.status_code === 200 && /over 65536 bytes/.test(a.error ?? '')),
    JSON.stringify(d.attempts[0]),
  );
});

test('a receiver that hangs is cut off at the time limit and retried', async (t) => {
  // The service's limit is 10 s; a deliverer of its own with a short one keeps the test quick.
  const deliverer = new WebhookDeliverer({ db: ctx.db, clock: ctx.clock, allowPrivate: true, timeoutMs: 200 });
  t.after(() => deliverer.stop());
  const d = await retriedUntilSettled(t, 'hang', deliverer);
  assert.equal(d.state, 'failed');
  assert.ok(
    d.attempts.every((a) => a.status_code === null && /no complete answer within 0.2 s/.test(a.error ?? '')),
    JSON.stringify(d.attempts[0]),
  );
});

test('a receiver that recovers gets the delivery at its next retry', async (t) => {
  const { w, receiver, endpointId, token } = await worldWithEndpoint(ctx, t, { behaviour: 'status500' });
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await fanOut(ctx);
  await ctx.webhooks.runDue();
  receiver.behaviour = 'ok';
  await ctx.webhooks.runDue();
  assert.equal((await onlyDelivery(token, endpointId)).state, 'pending', 'not before its retry is due');
  ctx.clock.advance(30_000);
  await ctx.webhooks.runDue();
  const d = await onlyDelivery(token, endpointId);
  assert.equal(d.state, 'delivered');
  assert.deepEqual(
    d.attempts.map((a) => a.status_code),
    [500, 200],
  );
  assert.equal(new Set(receiver.received.map((r) => r.body.uuid)).size, 1, 'the same event both times');
});

test("a slow endpoint delays neither another endpoint nor the service's requests", async (t) => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const slow = await Receiver.start(t, 'hang');
  const fast = await Receiver.start(t, 'ok');
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: slow.url, secret: slow.secret });
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: fast.url, secret: fast.secret });
  const deliverer = new WebhookDeliverer({ db: ctx.db, clock: ctx.clock, allowPrivate: true, pollMs: 50 });
  t.after(() => deliverer.stop());
  deliverer.start();

  const client = cfhClient(ctx.app, w.token);
  await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  await fanOut(ctx);
  await slow.waitFor(1);
  // The slow endpoint holds its first delivery; meanwhile requests are served and the other
  // endpoint gets every event.
  for (let i = 0; i < 3; i++) await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  await fanOut(ctx);
  await fast.waitFor(4);
  assert.deepEqual(fast.statuses(), ['created', 'created', 'created', 'created']);
  assert.equal(slow.requests, 1, "the slow endpoint has one attempt in flight, the rest of its store's events wait their turn");
});
