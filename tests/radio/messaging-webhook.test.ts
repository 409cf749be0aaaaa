// R2 playRadioWebhookMessage: the messaging provider's signed form webhook. Signatures here are
// computed by the provider's own Node library (twilio), not by the code under test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import twilio from 'twilio';
import { makeWorld, testApp, type World } from '../support/world.ts';
import { assertSpeechWav } from './audio.ts';
import { outboxCount, outboxPlay } from './support.ts';

const { app, db, clock, config } = await testApp();

type Params = Record<string, string | string[]>;

function smsParams(w: World, overrides: Params = {}): Params {
  return {
    ToCountry: 'US',
    SmsMessageSid: 'SM0123456789abcdef0123456789abcdef',
    NumMedia: '0',
    AccountSid: w.accountSid,
    Body: 'Customer needs help in aisle 5 & the price is $3.50',
    From: '+15551230000',
    To: '+15559870000',
    MessageSid: 'SM0123456789abcdef0123456789abcdef',
    ApiVersion: '2010-04-01',
    ...overrides,
  };
}

function formOf(params: Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const v of typeof value === 'string' ? [value] : value) form.append(name, v);
  }
  return form.toString();
}

const pathOf = (edgeId: string, query = '') => `/webhooks/incoming/messaging/${encodeURIComponent(edgeId)}${query}`;

/** Signed by the provider's library over the URL the provider would call. */
function sign(authToken: string, path: string, params: Params, base = config.publicBaseUrl): string {
  return twilio.getExpectedTwilioSignature(authToken, base + path, params);
}

function post(path: string, params: Params | string, headers: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: typeof params === 'string' ? params : formOf(params),
  });
}

test("a message signed by the provider's library is played: the Body spoken, From, To and AccountSid recorded", async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const params = smsParams(w);
  const signature = sign(w.authToken, path, params);
  assert.ok(twilio.validateRequest(w.authToken, signature, config.publicBaseUrl + path, params), 'the library agrees with itself');

  const res = await post(path, params, { 'x-messaging-signature': signature });
  assert.equal(res.statusCode, 200, res.body);
  const { success, message_id } = res.json<{ success: boolean; message_id: string }>();
  assert.equal(success, true);

  const play = await outboxPlay(db, message_id);
  assert.ok(play);
  assert.equal(play.topic, `radio/${w.edgeId}/play`);
  assert.equal(play.payload.text, params.Body);
  assert.equal(play.payload.actor, '+15551230000');
  assert.equal(play.payload.mime, 'audio/wav');
  assertSpeechWav(play.audio);

  const [row] = await db.query<Record<string, unknown>>(
    'SELECT source, credential, text, account_sid, from_number, to_number, organization_id FROM radio_messages WHERE message_id = $1',
    [message_id],
  );
  assert.deepEqual(row, {
    source: 'messaging',
    credential: 'messaging_signature',
    text: params.Body,
    account_sid: w.accountSid,
    from_number: '+15551230000',
    to_number: '+15559870000',
    organization_id: w.organizationId,
  });
});

test("the provider's own header X-Twilio-Signature is accepted as well", async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const params = smsParams(w);
  const res = await post(path, params, { 'x-twilio-signature': sign(w.authToken, path, params) });
  assert.equal(res.statusCode, 200, res.body);
});

test('the query string is part of what is signed', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId, '?store=10&lang=en');
  const params = smsParams(w);
  const signature = sign(w.authToken, path, params);
  assert.equal((await post(path, params, { 'x-messaging-signature': signature })).statusCode, 200);
  assert.equal((await post(pathOf(w.edgeId, '?store=11&lang=en'), params, { 'x-messaging-signature': signature })).statusCode, 403);
  assert.equal((await post(pathOf(w.edgeId), params, { 'x-messaging-signature': signature })).statusCode, 403);
});

test('repeated fields and spaces are signed as the provider signs them', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const params = smsParams(w, { Body: 'Two words   and more + plus', MediaUrl: ['https://b.example/2', 'https://a.example/1'] });
  const res = await post(path, params, { 'x-messaging-signature': sign(w.authToken, path, params) });
  assert.equal(res.statusCode, 200, res.body);
  const play = await outboxPlay(db, res.json<{ message_id: string }>().message_id);
  assert.equal(play?.payload.text, 'Two words   and more + plus', 'spaces and + arrive as sent');
});

test('a signature over anything else than what was sent is refused with 403, and nothing is queued', async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const params = smsParams(w);
  const good = sign(w.authToken, path, params);
  const cases: [string, string, Params, Record<string, string>][] = [
    ['another host', path, params, { 'x-messaging-signature': sign(w.authToken, path, params, 'https://evil.example') }],
    ['another scheme', path, params, { 'x-messaging-signature': sign(w.authToken, path, params, config.publicBaseUrl.replace('http:', 'https:')) }],
    ['another path (edge)', path, params, { 'x-messaging-signature': sign(w.authToken, pathOf(other.edgeId), params) }],
    ['a trailing slash', path, params, { 'x-messaging-signature': sign(w.authToken, `${path}/`, params) }],
    ['a query the request does not have', path, params, { 'x-messaging-signature': sign(w.authToken, `${path}?a=1`, params) }],
    ['a changed Body', path, { ...params, Body: 'Something else entirely' }, { 'x-messaging-signature': good }],
    ['a changed From', path, { ...params, From: '+15550000000' }, { 'x-messaging-signature': good }],
    ['an added field', path, { ...params, Extra: '1' }, { 'x-messaging-signature': good }],
    ['a removed field', path, { ...params, NumMedia: [] }, { 'x-messaging-signature': good }],
    ['a field renamed', path, { ...smsParams(w, { ToCountry: [] }), tocountry: 'US' }, { 'x-messaging-signature': good }],
    ['another auth token', path, params, { 'x-messaging-signature': sign('some-other-auth-token-entirely', path, params) }],
    ["another account's token", path, params, { 'x-messaging-signature': sign(other.authToken, path, params) }],
    ['no signature', path, params, {}],
    ['an empty signature', path, params, { 'x-messaging-signature': '' }],
    ['garbage', path, params, { 'x-messaging-signature': 'not base64 at all!' }],
    ['a truncated signature', path, params, { 'x-messaging-signature': good.slice(0, -2) }],
    ['the signature in lower case', path, params, { 'x-messaging-signature': good.toLowerCase() }],
  ];
  for (const [name, p, sent, headers] of cases) {
    const res = await post(p, sent, headers);
    assert.equal(res.statusCode, 403, `${name}: ${res.body}`);
  }
  assert.equal(await outboxCount(db, w.edgeId), 0);
  // The same request with the good signature passes: the refusals above were for their change.
  assert.equal((await post(path, params, { 'x-messaging-signature': good })).statusCode, 200);
});

test("an unknown account, or an account of another organization than the edge device's, is 403", async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const unknown = smsParams(w, { AccountSid: `AC${'f'.repeat(32)}` });
  assert.equal((await post(path, unknown, { 'x-messaging-signature': sign(w.authToken, path, unknown) })).statusCode, 403);
  // Correctly signed by the other organization's own account, for this organization's edge device.
  const foreign = smsParams(other);
  assert.equal((await post(path, foreign, { 'x-messaging-signature': sign(other.authToken, path, foreign) })).statusCode, 403);
});

test('an unknown edge device is 404 to a correctly signed request, 403 to an unsigned one', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf('no-such-edge-device');
  const params = smsParams(w);
  assert.equal((await post(path, params, { 'x-messaging-signature': sign(w.authToken, path, params) })).statusCode, 404);
  assert.equal((await post(path, params, {})).statusCode, 403);
  assert.equal((await post(path, params, { 'x-messaging-signature': sign('wrong-token-wrong-token', path, params) })).statusCode, 403);
});

test('missing required fields are 422, and a short AccountSid too', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  for (const field of ['AccountSid', 'Body', 'From', 'To']) {
    const params = smsParams(w, { [field]: [] });
    const res = await post(path, params, { 'x-messaging-signature': sign(w.authToken, path, params) });
    assert.equal(res.statusCode, 422, field);
    assert.ok(res.json<{ errors: Record<string, unknown> }>().errors[field], `errors.${field}`);
  }
  const short = smsParams(w, { AccountSid: 'AC123' });
  assert.equal((await post(path, short, { 'x-messaging-signature': sign(w.authToken, path, short) })).statusCode, 422);
  const tooLong = smsParams(w, { Body: 'x'.repeat(10_001) });
  assert.equal((await post(path, tooLong, { 'x-messaging-signature': sign(w.authToken, path, tooLong) })).statusCode, 422);
});

test('a JSON body is refused with 415: the provider sends forms', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const params = smsParams(w);
  const res = await app.inject({ method: 'POST', url: path, headers: { 'x-messaging-signature': sign(w.authToken, path, params) }, payload: params });
  assert.equal(res.statusCode, 415);
});

test("the edge device's voice handlers run over the Body", async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['normalize', 'transcript'] });
  const path = pathOf(w.edgeId);
  const params = smsParams(w, { Body: 'Price check: $3.50 & 10% off' });
  const res = await post(path, params, { 'x-messaging-signature': sign(w.authToken, path, params) });
  assert.equal(res.statusCode, 200, res.body);
  const id = res.json<{ message_id: string }>().message_id;
  assert.equal((await outboxPlay(db, id))?.payload.text, 'Price check: 3 dollars 50 and 10 percent off');
  const list = await app.inject({ url: `/api/radio/edges/${w.edgeId}/transcripts`, headers: { 'api-key': w.edgeKey } });
  const [t] = list.json<{ transcripts: Record<string, unknown>[] }>().transcripts;
  assert.deepEqual(
    { id: t?.message_id, source: t?.source, from: t?.from, to: t?.to, account_sid: t?.account_sid },
    { id, source: 'messaging', from: '+15551230000', to: '+15559870000', account_sid: w.accountSid },
  );
});

test('a Body over 500 characters: the first 500 are spoken, the whole text is recorded', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const body = `${'Restock the shelves in aisle nine please. '.repeat(20)}`.trim();
  assert.ok(body.length > 700);
  const params = smsParams(w, { Body: body, MessageSid: 'SM-long-1' });
  const res = await post(path, params, { 'x-messaging-signature': sign(w.authToken, path, params) });
  assert.equal(res.statusCode, 200, res.body);
  const id = res.json<{ message_id: string }>().message_id;
  const [row] = await db.query<{ text: string; spoken_text: string; truncated: boolean }>(
    'SELECT text, spoken_text, truncated FROM radio_messages WHERE message_id = $1',
    [id],
  );
  assert.equal(row?.text, body);
  assert.equal(row?.spoken_text, body.slice(0, 500).trim());
  assert.equal(row?.truncated, true);
  assert.equal((await outboxPlay(db, id))?.payload.text, body.slice(0, 500).trim());
});

test('an R2 whose MessageSid was seen before is a replay: 200 with the first message_id, not spoken again', async () => {
  const w = await makeWorld(db, clock);
  const path = pathOf(w.edgeId);
  const first = smsParams(w, { MessageSid: 'SM-replay-1', Body: 'Customer waiting at the deli counter' });
  const res1 = await post(path, first, { 'x-messaging-signature': sign(w.authToken, path, first) });
  assert.equal(res1.statusCode, 200, res1.body);
  clock.advance(60_000); // long past the duplicate window: it is the MessageSid that tells
  const again = smsParams(w, { MessageSid: 'SM-replay-1', Body: 'Customer waiting at the deli counter' });
  const res2 = await post(path, again, { 'x-messaging-signature': sign(w.authToken, path, again) });
  assert.equal(res2.statusCode, 200, res2.body);
  assert.equal(res2.json<{ message_id: string }>().message_id, res1.json<{ message_id: string }>().message_id);
  assert.equal(await outboxCount(db, w.edgeId), 1);
  const other = smsParams(w, { MessageSid: 'SM-replay-2', Body: 'Customer waiting at the deli counter' });
  const res3 = await post(path, other, { 'x-messaging-signature': sign(w.authToken, path, other) });
  assert.notEqual(res3.json<{ message_id: string }>().message_id, res1.json<{ message_id: string }>().message_id);
});

test("the provider's own path /webhooks/incoming/twilio/{edgeId} is the same operation: signed over its own URL by the provider's library, played; a bad signature is 403", async () => {
  const w = await makeWorld(db, clock);
  const path = `/webhooks/incoming/twilio/${encodeURIComponent(w.edgeId)}`;
  const params = smsParams(w, { MessageSid: 'SM-alias-1', Body: 'Customer waiting at the paint counter' });
  const signature = sign(w.authToken, path, params);
  assert.ok(twilio.validateRequest(w.authToken, signature, config.publicBaseUrl + path, params), 'the library agrees with itself');

  const res = await post(path, params, { 'x-twilio-signature': signature });
  assert.equal(res.statusCode, 200, res.body);
  const play = await outboxPlay(db, res.json<{ message_id: string }>().message_id);
  assert.equal(play?.topic, `radio/${w.edgeId}/play`);
  assert.equal(play?.payload.text, params.Body);

  // What is signed is the URL the provider called: a signature over R2's documented path does not pass here.
  const other = smsParams(w, { MessageSid: 'SM-alias-2' });
  for (const bad of [sign(w.authToken, pathOf(w.edgeId), other), sign('some-other-auth-token-entirely', path, other), '']) {
    const refused = await post(path, other, { 'x-twilio-signature': bad });
    assert.equal(refused.statusCode, 403, refused.body);
  }
  assert.equal(await outboxCount(db, w.edgeId), 1);
});

test('the alias is left out of the OpenAPI document: R2 is listed once, under its own path', async () => {
  const doc = (await app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, { operationId?: string }>> }>();
  assert.deepEqual(
    Object.keys(doc.paths)
      .filter((p) => p.startsWith('/webhooks/incoming/'))
      .sort(),
    ['/webhooks/incoming/generic', '/webhooks/incoming/messaging/{edgeId}'],
  );
  const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  assert.equal(ids.filter((id) => id === 'playRadioWebhookMessage').length, 1);
});
