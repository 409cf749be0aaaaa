// The brute-force guard on the real operations: a client that keeps guessing open codes, message
// ids, tokens, keys or the secret is refused with 429 and Retry-After, even once it guesses right,
// and that refusal changes nothing. Each test is one client (one address) with a small budget.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { messagingSignature } from '../../src/radio/signature.ts';
import { assertContractAnswer, describe, probeRefusesCleanly, snapshot, type Probe } from '../support/contract.ts';
import { placeOrder } from '../support/requests.ts';
import { makeWorld, testApp, withSecret, type TestContext, type World } from '../support/world.ts';

const BUDGET = 4;
const WINDOW_MS = 60_000;

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ failureLimit: { max: BUDGET, windowMs: WINDOW_MS } });
});

let client = 0;
/** A client address of its own, so one test's failures do not spend another's budget. */
const newClient = () => `198.51.100.${++client}`;

function from(ip: string, probe: Probe): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: probe.method, url: probe.url, headers: probe.headers ?? {}, payload: probe.payload, remoteAddress: ip });
}

/**
 * Spends the client's budget with `guess(i)` (each refused with `refusal`), then shows that the
 * right request is refused with 429 and Retry-After and changes nothing, that another client is
 * served, and that the client is served again once the window has passed.
 */
async function guessingIsStopped(w: World, refusal: number, guess: (i: number) => Probe, right: Probe, rightStatus: number): Promise<void> {
  const ip = newClient();
  for (let i = 0; i < BUDGET; i++) {
    const res = await from(ip, guess(i));
    assertContractAnswer(res, describe(guess(i)));
    assert.equal(res.statusCode, refusal, `guess ${i}: ${describe(guess(i))} -> ${res.body}`);
  }
  const before = await snapshot(ctx.db, w);
  const stopped = await from(ip, right);
  assertContractAnswer(stopped, describe(right));
  assert.equal(stopped.statusCode, 429, `the right request once the budget is spent: ${stopped.body}`);
  assert.equal(stopped.json<{ code: string }>().code, 'too_many_failures');
  const retryAfter = Number(stopped.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000, `Retry-After ${stopped.headers['retry-after']}`);
  const after = await snapshot(ctx.db, w);
  assert.equal(after, before, 'the refused request changed nothing');
  // Another client is not held back by this one.
  const other = await probeRefusesCleanly(ctx.app, ctx.db, [w], right);
  assert.notEqual(other.statusCode, 429);
  assert.equal(other.statusCode, rightStatus, other.body);
  ctx.clock.advance(retryAfter * 1000);
  assert.notEqual((await from(ip, guess(BUDGET))).statusCode, 429, 'served again once Retry-After has passed');
}

test('guessing open codes on L5 is stopped with 429, and the right code then opens nothing', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, w);
  const agree = (c: string): Probe => ({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${c}`), headers: { 'content-type': 'application/json' }, payload: '{"command":"agree"}' });
  await guessingIsStopped(w, 404, (i) => agree(`${code.slice(0, -2)}${i}x`), agree(code), 200);
});

test('guessing open codes on L6 is stopped with 429, and the right code then completes nothing', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, w);
  const complete = (c: string): Probe => ({ method: 'PUT', url: withSecret(`/api/lockers/orders/customer/${c}`) });
  const ip = newClient();
  for (let i = 0; i < BUDGET; i++) assert.equal((await from(ip, complete(`guess${i}${code}`.slice(0, 32)))).statusCode, 404);
  const stopped = await from(ip, complete(code));
  assert.equal(stopped.statusCode, 429, stopped.body);
  assert.match(String(stopped.headers['retry-after']), /^\d+$/);
  const [order] = await ctx.db.query<{ completed_at: string | null }>('SELECT completed_at FROM locker_orders WHERE open_code = $1', [code]);
  assert.equal(order?.completed_at, null, 'the order is still open');
});

test('guessing the secret_token is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const list = (secret: string | null): Probe => ({ method: 'GET', url: secret === null ? withSecret(`/api/lockers/locations/${w.locationId}`) : `/api/lockers/locations/${w.locationId}?secret_token=${secret}` });
  await guessingIsStopped(w, 401, (i) => list(`guess-${i}`), list(null), 200);
});

test('guessing bearer tokens on CFH is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const create = (token: string): Probe => ({
    method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ location_id: w.locationId, option_id: w.optionId }),
  });
  await guessingIsStopped(w, 401, (i) => create(`${w.token}${i}`), create(w.token), 201);
});

test('guessing CFH message ids is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const made = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload: { location_id: w.locationId, option_id: w.optionId } });
  const messageId = made.json<{ message_id: string }>().message_id;
  const claim = (id: string): Probe => ({
    method: 'POST', url: '/api/callforhelp/claim', headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ message_id: id, channel_id: 'C', claimed_by: 'Ann', claimed_by_user_id: 'U' }),
  });
  await guessingIsStopped(w, 404, (i) => claim(`${messageId.slice(0, -1)}${i}`), claim(messageId), 200);
});

test("guessing a locker's api-key on L7 is stopped with 429", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const report = (key: string): Probe => ({
    method: 'POST', url: '/api/lockers/cabinet/status', headers: { 'api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ cabinets: [{ key: 1, front_status: 'open' }] }),
  });
  await guessingIsStopped(w, 401, (i) => report(`${w.lockerKey}${i}`), report(w.lockerKey), 200);
});

test("guessing an edge device's key on R1 is stopped with 429", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const playText = (key: string): Probe => ({
    method: 'POST', url: '/webhooks/incoming/generic', headers: { 'api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ edgeId: w.edgeId, text: 'Aisle 5', actor: 'Ann' }),
  });
  await guessingIsStopped(w, 403, (i) => playText(`${w.edgeKey}${i}`), playText(w.edgeKey), 200);
});

test('guessing R2 signatures is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const path = `/webhooks/incoming/messaging/${w.edgeId}`;
  const fields = { AccountSid: w.accountSid, Body: 'Aisle 5', From: '+15550001111', To: '+15550002222' };
  const webhook = (signature: string): Probe => ({
    method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-messaging-signature': signature },
    payload: new URLSearchParams(fields).toString(),
  });
  const right = messagingSignature(w.authToken, `${ctx.config.publicBaseUrl}${path}`, fields);
  await guessingIsStopped(w, 403, (i) => webhook(`${right.slice(0, -3)}${i}x=`), webhook(right), 200);
});
