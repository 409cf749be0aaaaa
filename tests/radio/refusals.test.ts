// Contract section 3: every refusal of R1 and R2 carries `error` with the same text as `message`,
// which deployed edge integrations read; other operations keep `{ message, code }`. Each status
// either operation can answer is reached here (the brute-force guard's 429 and a busy speech
// engine's 503 included), and the OpenAPI document says so for exactly those two operations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import twilio from 'twilio';
import type { LightMyRequestResponse } from 'fastify';
import { SpeechBusyError, type SpeechSynthesizer } from '../../src/radio/speech/speech.ts';
import { makeWorld, provisionToken, testApp, testSpeech, type TestContext, type World } from '../support/world.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BUDGET = 3;

interface Refusal {
  what: string;
  status: number;
  send: (ctx: TestContext, w: World) => Promise<LightMyRequestResponse>;
}

const json = (ctx: TestContext, headers: Record<string, string>, payload: string | Record<string, unknown>) =>
  ctx.app.inject({ method: 'POST', url: '/webhooks/incoming/generic', headers: { 'content-type': 'application/json', ...headers }, payload });
const play = (w: World, text = 'Cleanup in aisle 5') => ({ edgeId: w.edgeId, text, actor: 'Ann', process: false });

const fields = (w: World, extra: Record<string, string> = {}) => ({
  AccountSid: w.accountSid,
  Body: 'Aisle 5 please',
  From: '+15550001111',
  To: '+15550002222',
  ...extra,
});
function form(ctx: TestContext, path: string, params: Record<string, string>, authToken: string | null, contentType = 'application/x-www-form-urlencoded') {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (authToken !== null) headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(authToken, ctx.config.publicBaseUrl + path, params);
  return ctx.app.inject({ method: 'POST', url: path, headers, payload: new URLSearchParams(params).toString() });
}
const r2 = (edgeId: string) => `/webhooks/incoming/messaging/${encodeURIComponent(edgeId)}`;
const alias = (edgeId: string) => `/webhooks/incoming/twilio/${encodeURIComponent(edgeId)}`;

const R1: Refusal[] = [
  { what: 'no credential', status: 403, send: (ctx, w) => json(ctx, {}, play(w)) },
  { what: 'a wrong api-key', status: 403, send: (ctx, w) => json(ctx, { 'api-key': 'not-a-key-of-anyone' }, play(w)) },
  { what: "another edge device's key", status: 403, send: async (ctx, w) => json(ctx, { 'api-key': (await makeWorld(ctx.db, ctx.clock)).edgeKey }, play(w)) },
  {
    what: 'a token without the radio scope',
    status: 403,
    send: async (ctx, w) => json(ctx, { authorization: `Bearer ${await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'])}` }, play(w)),
  },
  {
    what: 'an unknown edge device, by a valid token',
    status: 404,
    send: (ctx, w) => json(ctx, { authorization: `Bearer ${w.token}` }, { ...play(w), edgeId: 'no-such-edge' }),
  },
  { what: '501 characters', status: 422, send: (ctx, w) => json(ctx, { 'api-key': w.edgeKey }, play(w, 'a'.repeat(501))) },
  { what: 'a missing field', status: 422, send: (ctx, w) => json(ctx, { 'api-key': w.edgeKey }, { edgeId: w.edgeId, actor: 'Ann' }) },
  { what: 'blank text', status: 422, send: (ctx, w) => json(ctx, { 'api-key': w.edgeKey }, play(w, '   ')) },
  { what: 'a body that is not JSON', status: 400, send: (ctx, w) => json(ctx, { 'api-key': w.edgeKey }, '{"edgeId":') },
  {
    what: 'a form body',
    status: 415,
    send: (ctx, w) =>
      ctx.app.inject({
        method: 'POST',
        url: '/webhooks/incoming/generic',
        headers: { 'api-key': w.edgeKey, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `edgeId=${w.edgeId}&text=x&actor=Ann`,
      }),
  },
  {
    what: 'a body over 1 MiB',
    status: 413,
    send: (ctx, w) => json(ctx, { 'api-key': w.edgeKey }, JSON.stringify({ ...play(w), pad: 'x'.repeat(1024 * 1024) })),
  },
];

const R2 = (path: (edgeId: string) => string): Refusal[] => [
  { what: 'no signature', status: 403, send: (ctx, w) => form(ctx, path(w.edgeId), fields(w), null) },
  { what: 'a bad signature', status: 403, send: (ctx, w) => form(ctx, path(w.edgeId), fields(w), 'some-other-auth-token-entirely') },
  { what: 'an unknown account', status: 403, send: (ctx, w) => form(ctx, path(w.edgeId), fields(w, { AccountSid: `AC${'f'.repeat(32)}` }), w.authToken) },
  { what: 'an unknown edge device, signed', status: 404, send: (ctx, w) => form(ctx, path('no-such-edge'), fields(w), w.authToken) },
  { what: 'a missing Body', status: 422, send: (ctx, w) => form(ctx, path(w.edgeId), { AccountSid: w.accountSid, From: '+1', To: '+2' }, w.authToken) },
  { what: 'a short AccountSid', status: 422, send: (ctx, w) => form(ctx, path(w.edgeId), fields(w, { AccountSid: 'AC123' }), w.authToken) },
  {
    what: 'a JSON body',
    status: 415,
    send: (ctx, w) => ctx.app.inject({ method: 'POST', url: path(w.edgeId), headers: { 'content-type': 'application/json' }, payload: fields(w) }),
  },
  { what: 'a form over 64 KiB', status: 413, send: (ctx, w) => form(ctx, path(w.edgeId), fields(w, { Pad: 'x'.repeat(70_000) }), w.authToken) },
];

function assertErrorIsMessage(res: LightMyRequestResponse, what: string, status: number): void {
  assert.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 300)}`);
  const body = res.json<{ message: unknown; code: unknown; error: unknown }>();
  assert.equal(typeof body.message, 'string', what);
  assert.equal(typeof body.code, 'string', what);
  assert.equal(body.error, body.message, `${what}: error carries the message's text`);
}

test('every refusal of R1 carries error with the same text as message: 400, 403, 404, 413, 415 and 422 (501 characters)', async (t) => {
  const ctx = await testApp({ t });
  const w = await makeWorld(ctx.db, ctx.clock);
  for (const r of R1) assertErrorIsMessage(await r.send(ctx, w), `R1, ${r.what}`, r.status);
});

test("every refusal of R2, at its path and at the provider's alias, carries error with the same text as message: 403, 404, 413, 415, 422", async (t) => {
  const ctx = await testApp({ t });
  const w = await makeWorld(ctx.db, ctx.clock);
  for (const r of [...R2(r2), ...R2(alias)]) assertErrorIsMessage(await r.send(ctx, w), `R2, ${r.what}`, r.status);
});

test("the brute-force guard's 429 on R1 and R2 carries error with the same text as message", async (t) => {
  const ctx = await testApp({ t, failureLimit: { max: BUDGET, windowMs: 60_000 } });
  const w = await makeWorld(ctx.db, ctx.clock);
  const cases: [string, () => Promise<LightMyRequestResponse>][] = [
    ['R1', () => json(ctx, { 'api-key': 'not-a-key-of-anyone' }, play(w))],
    ['R2', () => form(ctx, r2(w.edgeId), fields(w), 'some-other-auth-token-entirely')],
    ['R2 (alias)', () => form(ctx, alias(w.edgeId), fields(w), 'some-other-auth-token-entirely')],
  ];
  for (const [what, guess] of cases) {
    let res = await guess();
    for (let i = 0; i < BUDGET * 3 && res.statusCode !== 429; i++) {
      assertErrorIsMessage(res, `${what}, guess ${i}`, 403);
      res = await guess();
    }
    assertErrorIsMessage(res, `${what}, once the budget is spent`, 429);
    assert.equal(res.json<{ code: string }>().code, 'too_many_failures');
    ctx.clock.advance(60_000);
  }
});

/** The engines, except that every synthesis finds them busy. */
function busySpeech(): SpeechSynthesizer {
  const inner = testSpeech();
  return {
    synthesizeSamples: () => Promise.reject(new SpeechBusyError('every worker is busy', 2)),
    synthesize: () => Promise.reject(new SpeechBusyError('every worker is busy', 2)),
    waiting: (tenant) => inner.waiting(tenant),
    ready: () => Promise.resolve(),
    close: () => Promise.resolve(),
    engines: inner.engines,
  };
}

test("a busy speech engine's 503 on R1 and R2 carries error with the same text as message", async (t) => {
  const ctx = await testApp({ t, speech: busySpeech() });
  const w = await makeWorld(ctx.db, ctx.clock);
  assertErrorIsMessage(await json(ctx, { 'api-key': w.edgeKey }, play(w)), 'R1, speech busy', 503);
  assertErrorIsMessage(await form(ctx, r2(w.edgeId), fields(w), w.authToken), 'R2, speech busy', 503);
});

test('the other operations keep { message, code }: R3 and C0 refusals carry no error', async (t) => {
  const ctx = await testApp({ t });
  const w = await makeWorld(ctx.db, ctx.clock);
  const refused = [
    await ctx.app.inject({ url: `/api/radio/transcripts?edge_id=${w.edgeId}` }),
    await ctx.app.inject({ url: '/api/radio/transcripts?edge_id=no-such-edge', headers: { authorization: `Bearer ${w.token}` } }),
    await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload: {} }),
  ];
  for (const res of refused) {
    assert.ok(res.statusCode >= 400, res.body);
    assert.equal('error' in res.json<Json>(), false, res.body);
  }
});

test('the OpenAPI document gives every error answer of R1 and R2, and only theirs, a required error', async (t) => {
  const ctx = await testApp({ t });
  const doc = (await ctx.app.inject({ url: '/openapi.json' })).json<Json>();
  const resolve = (schema: Json): Json => doc.components.schemas[String(schema.$ref).split('/').at(-1) as string];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const op of Object.values(item as Json) as Json[]) {
      const radio = op.operationId === 'playRadioText' || op.operationId === 'playRadioWebhookMessage';
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const schema = (response as Json).content?.['application/json']?.schema;
        if (status.startsWith('2') || schema === undefined) continue;
        const body = resolve(schema);
        const where = `${op.operationId} ${status} (${path})`;
        assert.equal('error' in body.properties, radio, where);
        if (radio) {
          assert.ok(body.required.includes('error'), `${where}: required`);
          assert.equal(body.example.error, body.example.message, `${where}: the example's error is its message`);
        }
      }
    }
  }
});
