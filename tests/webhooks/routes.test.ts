// W1 and W2 over HTTP: the webhooks scope, tenancy as contract section 2 says (another
// organization's endpoint or delivery is not found), pages, no secrets, redelivery, the document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { assertContractAnswer } from '../support/contract.ts';
import { cfhClient, createRequest, iso } from '../cfh/support.ts';
import { provisionToken, type Teardown, type TestContext } from '../support/world.ts';
import { deliverNow, deliveriesOf, listDeliveries, redeliver, webhookApp, type DeliveryView, worldWithEndpoint } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await webhookApp({ clock: new ManualClock(new Date()) });
});

async function setUp(t: Teardown, requests = 1) {
  const { w, receiver, endpointId, token } = await worldWithEndpoint(ctx, t);
  for (let i = 0; i < requests; i++) await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  return { w, receiver, endpointId, token };
}

test("W1 lists an endpoint's deliveries newest first, with attempts and no secret or URL", async (t) => {
  const { receiver, endpointId, token } = await setUp(t, 2);
  const res = await listDeliveries(ctx.app, token, endpointId);
  assert.equal(res.statusCode, 200, res.body);
  const deliveries = res.json<DeliveryView[]>();
  assert.equal(deliveries.length, 2);
  assert.ok((deliveries[0]?.id ?? 0) > (deliveries[1]?.id ?? 0), 'newest first');
  assert.deepEqual(
    deliveries.map((d) => d.event_uuid),
    receiver.received.map((r) => r.body.uuid).reverse(),
  );
  for (const d of deliveries) {
    assert.deepEqual(Object.keys(d).sort(), ['attempts', 'created_at', 'event_uuid', 'id', 'next_attempt_at', 'state', 'status', 'type']);
    assert.equal(d.type, 'callforhelp');
    assert.equal(d.status, 'created');
    assert.equal(d.state, 'delivered');
    assert.equal(d.attempts.length, 1);
    assert.match(d.attempts[0]?.at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.deepEqual(Object.keys(d.attempts[0] ?? {}).sort(), ['at', 'duration_ms', 'error', 'status_code']);
  }
  assert.ok(!res.body.includes(receiver.secret) && !res.body.includes(receiver.url), 'no secret, no URL');
});

test('W1 pages with limit and cursor; a full page links to the next', async (t) => {
  const { endpointId, token } = await setUp(t, 5);
  const all = await deliveriesOf(ctx.app, token, endpointId);
  const first = await listDeliveries(ctx.app, token, endpointId, '?limit=2');
  assert.equal(first.statusCode, 200);
  const page1 = first.json<DeliveryView[]>();
  assert.deepEqual(
    page1.map((d) => d.id),
    all.slice(0, 2).map((d) => d.id),
  );
  assert.equal(first.headers.link, `</api/webhooks/${endpointId}/deliveries?limit=2&cursor=${page1[1]?.id}>; rel="next"`);
  const second = await listDeliveries(ctx.app, token, endpointId, `?limit=2&cursor=${page1[1]?.id}`);
  assert.deepEqual(
    second.json<DeliveryView[]>().map((d) => d.id),
    all.slice(2, 4).map((d) => d.id),
  );
  const last = await listDeliveries(ctx.app, token, endpointId, `?limit=2&cursor=${all[3]?.id}`);
  assert.deepEqual(
    last.json<DeliveryView[]>().map((d) => d.id),
    [all[4]?.id],
  );
  assert.equal(last.headers.link, undefined, 'the last page links nowhere');
  for (const bad of ['?limit=0', '?limit=201', '?limit=x', '?cursor=0', '?cursor=-1', '?cursor=abc']) {
    const res = await listDeliveries(ctx.app, token, endpointId, bad);
    assert.equal(res.statusCode, 422, `${bad}: ${res.body}`);
    assertContractAnswer(res, bad);
  }
});

test('W2 sends a delivery again: pending and due now, the same event, then delivered again', async (t) => {
  const { receiver, endpointId, token } = await setUp(t);
  const [delivery] = await deliveriesOf(ctx.app, token, endpointId);
  assert.ok(delivery);
  const res = await redeliver(ctx.app, token, delivery.id);
  assert.equal(res.statusCode, 202, res.body);
  const body = res.json<DeliveryView>();
  assert.equal(body.id, delivery.id);
  assert.equal(body.state, 'pending');
  assert.equal(body.next_attempt_at, iso(ctx.clock.now()), 'due now');
  await ctx.webhooks.runDue();
  assert.equal(receiver.requests, 2);
  assert.equal(receiver.received[1]?.body.uuid, receiver.received[0]?.body.uuid, 'the same event, deduplicated by uuid');
  assert.ok(receiver.received[1]?.signed);
  const [after] = await deliveriesOf(ctx.app, token, endpointId);
  assert.equal(after?.state, 'delivered');
  assert.equal(after?.attempts.length, 2);
});

test('W2 brings a failed delivery back, with a fresh day of retries', async (t) => {
  const { receiver, endpointId, token } = await setUp(t);
  receiver.behaviour = 'status500';
  const [delivery] = await deliveriesOf(ctx.app, token, endpointId);
  assert.ok(delivery);
  assert.equal((await redeliver(ctx.app, token, delivery.id)).statusCode, 202);
  await ctx.webhooks.runDue();
  for (let i = 0; i < 30; i++) {
    ctx.clock.advance(60 * 60_000);
    await ctx.webhooks.runDue();
  }
  const [failed] = await deliveriesOf(ctx.app, token, endpointId);
  assert.equal(failed?.state, 'failed');
  receiver.behaviour = 'ok';
  assert.equal((await redeliver(ctx.app, token, delivery.id)).statusCode, 202);
  await ctx.webhooks.runDue();
  const [delivered] = await deliveriesOf(ctx.app, token, endpointId);
  assert.equal(delivered?.state, 'delivered');
  assert.equal(delivered?.attempts.at(-1)?.status_code, 200);
});

test('W1 and W2 need a bearer token with the webhooks scope', async (t) => {
  const { w, endpointId, token } = await setUp(t);
  const [delivery] = await deliveriesOf(ctx.app, token, endpointId);
  assert.ok(delivery);
  const cfhOnly = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh']);
  const revoked = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks'], { revoked: true });
  const calls = [
    (auth: Record<string, string>) => ctx.app.inject({ method: 'GET', url: `/api/webhooks/${endpointId}/deliveries`, headers: auth }),
    (auth: Record<string, string>) => ctx.app.inject({ method: 'POST', url: `/api/webhooks/deliveries/${delivery.id}/redeliver`, headers: auth }),
  ];
  for (const call of calls) {
    for (const [auth, status, code] of [
      [{}, 401, 'unauthorized'],
      [{ authorization: 'Bearer nope-nope-nope-nope' }, 401, 'unauthorized'],
      [{ authorization: `Bearer ${revoked}` }, 401, 'unauthorized'],
      [{ authorization: `Bearer ${cfhOnly}` }, 403, 'insufficient_scope'],
    ] as const) {
      const res = await call(auth);
      assert.equal(res.statusCode, status, res.body);
      assert.equal(res.json<{ code: string }>().code, code);
      assertContractAnswer(res, JSON.stringify(auth));
    }
  }
});

test("another organization's endpoint and delivery are not found, and W2 changes nothing there", async (t) => {
  const mine = await setUp(t);
  const theirs = await setUp(t);
  const [their] = await deliveriesOf(ctx.app, theirs.token, theirs.endpointId);
  assert.ok(their);
  const list = await listDeliveries(ctx.app, mine.token, theirs.endpointId);
  assert.equal(list.statusCode, 404, list.body);
  assertContractAnswer(list, 'W1 of another organization');
  const unknown = await listDeliveries(ctx.app, mine.token, 2_000_000_000);
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(unknown.json(), list.json(), 'the same answer as for an endpoint that does not exist');
  const again = await redeliver(ctx.app, mine.token, their.id);
  assert.equal(again.statusCode, 404, again.body);
  assertContractAnswer(again, 'W2 of another organization');
  const [unchanged] = await deliveriesOf(ctx.app, theirs.token, theirs.endpointId);
  assert.deepEqual(unchanged, their);
  assert.equal((await redeliver(ctx.app, mine.token, Number.MAX_SAFE_INTEGER)).statusCode, 404);
});

test('W1 and W2 are in the OpenAPI document with their operationIds, credential and statuses', async () => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { operationId: string; security: unknown; responses: Record<string, unknown> }>>;
  }>();
  const w1 = doc.paths['/api/webhooks/{id}/deliveries']?.get;
  const w2 = doc.paths['/api/webhooks/deliveries/{delivery_id}/redeliver']?.post;
  assert.equal(w1?.operationId, 'listWebhookDeliveries');
  assert.equal(w2?.operationId, 'redeliverWebhook');
  for (const [op, ok] of [
    [w1, '200'],
    [w2, '202'],
  ] as const) {
    assert.deepEqual(op?.security, [{ bearerToken: [] }]);
    for (const s of [ok, '401', '403', '404', '422', '429', '503']) assert.ok(op?.responses[s], `${op?.operationId} documents ${s}`);
  }
});
