// The brute-force guard on the real operations: a client that keeps failing a credential (tokens,
// keys, the secret, signatures) gets 429 with Retry-After for its next failures of that kind, and
// that refusal changes nothing; the same client's request with the valid credential is served, as
// is another client; lookups of things that do not exist, made with a valid credential, are no
// guesses and are never refused. Each test is one client (one address) with a small budget.
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
 * Spends the client's budget with `guess(i)` (each refused with `refusal`), then shows that its
 * next guess is refused with 429 and Retry-After and changes nothing, that the same client's
 * right request is served all the same, that another client's guess gets the plain refusal, and
 * that the client's guesses get the plain refusal again once the window has passed.
 */
async function guessingIsStopped(w: World, refusal: number, guess: (i: number) => Probe, right: Probe, rightStatus: number): Promise<void> {
  const ip = newClient();
  for (let i = 0; i < BUDGET; i++) {
    const res = await from(ip, guess(i));
    assertContractAnswer(res, describe(guess(i)));
    assert.equal(res.statusCode, refusal, `guess ${i}: ${describe(guess(i))} -> ${res.body}`);
  }
  const before = await snapshot(ctx.db, w);
  const stopped = await from(ip, guess(BUDGET));
  assertContractAnswer(stopped, describe(guess(BUDGET)));
  assert.equal(stopped.statusCode, 429, `a guess once the budget is spent: ${stopped.body}`);
  assert.equal(stopped.json<{ code: string }>().code, 'too_many_failures');
  const retryAfter = Number(stopped.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000, `Retry-After ${stopped.headers['retry-after']}`);
  assert.equal(await snapshot(ctx.db, w), before, 'the refused guess changed nothing');
  // A valid credential is never refused for what the address did before.
  const served = await from(ip, right);
  assert.equal(served.statusCode, rightStatus, `the right request from the same client: ${served.body}`);
  // Another client is not held back by this one.
  const other = await probeRefusesCleanly(ctx.app, ctx.db, [w], guess(BUDGET + 1));
  assert.equal(other.statusCode, refusal, other.body);
  ctx.clock.advance(retryAfter * 1000);
  assert.equal((await from(ip, guess(BUDGET + 2))).statusCode, refusal, 'a plain refusal again once Retry-After has passed');
}

/** Lookups of things that do not exist, made with a valid credential, are answered every time. */
async function missesAreNoGuesses(miss: (i: number) => Probe, right: Probe, rightStatus: number): Promise<void> {
  const ip = newClient();
  for (let i = 0; i < BUDGET * 3; i++) {
    const res = await from(ip, miss(i));
    assert.equal(res.statusCode, 404, `miss ${i}: ${describe(miss(i))} -> ${res.body}`);
  }
  assert.equal((await from(ip, right)).statusCode, rightStatus);
}

test('a store app looking up open codes that do not exist with the valid secret_token is answered 404 each time, never locked out (L5, L6)', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, w);
  const agree = (c: string): Probe => ({
    method: 'POST',
    url: withSecret(`/api/lockers/cabinets/customers/${c}`),
    headers: { 'content-type': 'application/json' },
    payload: '{"command":"agree"}',
  });
  const complete = (c: string): Probe => ({ method: 'PUT', url: withSecret(`/api/lockers/orders/customer/${c}`) });
  await missesAreNoGuesses((i) => complete(`guess${i}${code}`.slice(0, 32)), agree(code), 200);
  await missesAreNoGuesses((i) => agree(`${code.slice(0, -2)}${i}x`), complete(code), 200);
});

test('guessing the secret_token is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const list = (secret: string | null): Probe => ({
    method: 'GET',
    url: secret === null ? withSecret(`/api/lockers/locations/${w.locationId}`) : `/api/lockers/locations/${w.locationId}?secret_token=${secret}`,
  });
  await guessingIsStopped(w, 401, (i) => list(`guess-${i}`), list(null), 200);
});

test('guessing bearer tokens on CFH is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const create = (token: string): Probe => ({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ location_id: w.locationId, option_id: w.optionId }),
  });
  await guessingIsStopped(w, 401, (i) => create(`${w.token}${i}`), create(w.token), 201);
});

test('CFH lookups of message ids that do not exist, with a valid token, are answered 404 each time', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const made = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const messageId = made.json<{ message_id: string }>().message_id;
  const claim = (id: string): Probe => ({
    method: 'POST',
    url: '/api/callforhelp/claim',
    headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ message_id: id, channel_id: 'C', claimed_by: 'Ann', claimed_by_user_id: 'U' }),
  });
  await missesAreNoGuesses((i) => claim(`${messageId.slice(0, -1)}${i}`), claim(messageId), 200);
});

test('failing one kind of credential does not spend the budget of another kind from the same address', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const ip = newClient();
  const list = (secret: string) => from(ip, { method: 'GET', url: `/api/lockers/locations/${w.locationId}?secret_token=${secret}` });
  const bearer = (token: string) =>
    from(ip, { method: 'GET', url: '/api/callforhelp/v1/tracking?message_id=abcdefghijklmnopqrstuv', headers: { authorization: `Bearer ${token}` } });
  for (let i = 0; i <= BUDGET; i++) await bearer(`wrong-token-${i}`);
  assert.equal((await bearer('wrong-token-again')).statusCode, 429);
  assert.equal((await list('wrong-secret')).statusCode, 401, 'a wrong secret_token is its own budget');
});

test('a client rotating its address is stopped by the budget of the credential kind, and valid credentials still pass', async () => {
  const own = await testApp({ failureLimit: { max: BUDGET, windowMs: WINDOW_MS, maxPerKind: BUDGET * 3 } });
  const w = await makeWorld(own.db, own.clock);
  const report = (ip: string, key: string) =>
    own.app.inject({
      method: 'POST',
      url: '/api/lockers/cabinet/status',
      headers: { 'api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ cabinets: [{ key: 1, front_status: 'open' }] }),
      remoteAddress: ip,
    });
  const statuses: number[] = [];
  for (let i = 0; i < BUDGET * 3 + 2; i++) statuses.push((await report(`203.0.113.${i + 1}`, `guess-${i}-0123456789`)).statusCode);
  assert.deepEqual(statuses.slice(0, BUDGET * 3), Array<number>(BUDGET * 3).fill(401));
  assert.deepEqual(statuses.slice(BUDGET * 3), [429, 429]);
  assert.equal((await report('203.0.113.250', w.lockerKey)).statusCode, 200, 'the locker with its own key is served');
  await own.app.close();
});

test('health probes are never refused, whatever their address failed before', async () => {
  const ip = newClient();
  for (let i = 0; i <= BUDGET + 2; i++) await from(ip, { method: 'GET', url: `/api/lockers/locations/1?secret_token=wrong-${i}` });
  for (const url of ['/healthz', '/readyz']) assert.equal((await from(ip, { method: 'GET', url })).statusCode, 200, url);
});

test("guessing a locker's api-key on L7 is stopped with 429", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const report = (key: string): Probe => ({
    method: 'POST',
    url: '/api/lockers/cabinet/status',
    headers: { 'api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ cabinets: [{ key: 1, front_status: 'open' }] }),
  });
  await guessingIsStopped(w, 401, (i) => report(`${w.lockerKey}${i}`), report(w.lockerKey), 200);
});

test("guessing an edge device's key on R1 is stopped with 429", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const playText = (key: string): Probe => ({
    method: 'POST',
    url: '/webhooks/incoming/generic',
    headers: { 'api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify({ edgeId: w.edgeId, text: 'Aisle 5', actor: 'Ann' }),
  });
  await guessingIsStopped(w, 403, (i) => playText(`${w.edgeKey}${i}`), playText(w.edgeKey), 200);
});

test('guessing R2 signatures is stopped with 429', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const path = `/webhooks/incoming/messaging/${w.edgeId}`;
  const fields = { AccountSid: w.accountSid, Body: 'Aisle 5', From: '+15550001111', To: '+15550002222' };
  const webhook = (signature: string): Probe => ({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-messaging-signature': signature },
    payload: new URLSearchParams(fields).toString(),
  });
  const right = messagingSignature(w.authToken, `${ctx.config.publicBaseUrl}${path}`, fields);
  await guessingIsStopped(w, 403, (i) => webhook(`${right.slice(0, -3)}${i}x=`), webhook(right), 200);
});
