// Property-based hostile input on the radio (R1, R2, the transcripts): malformed bodies and forms,
// path and query values, content types, signatures. Never a 5xx, errors in the contract's shape,
// and a refused request changes nothing stored. Valid plays synthesize speech, so runs are fewer.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { messagingSignature } from '../../src/radio/signature.ts';
import { bodyCases, extraQuery, hostileString, pathSegment, POISON, poisonBodies, queryValue, withBody } from '../support/arbitraries.ts';
import { holdEach, holdProperty, reached, runs, type Probe } from '../support/contract.ts';
import { makeWorld, testApp, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
let world: World;
let other: World;
before(async () => {
  ctx = await testApp();
  world = await makeWorld(ctx.db, ctx.clock, { voiceHandlers: ['normalize', 'chime', 'transcript'] });
  other = await makeWorld(ctx.db, ctx.clock);
});

/** R1's and the transcripts' credential: the edge device's key or a radio token, mostly right. */
const radioCredential = (w: World): fc.Arbitrary<Record<string, string | string[]>> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant({ 'api-key': w.edgeKey }) },
    { weight: 4, arbitrary: fc.constant({ authorization: `Bearer ${w.token}` }) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 10_000).map((s) => ({ 'api-key': s })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string | string[]>>(
        {},
        { 'api-key': '' },
        { 'api-key': w.lockerKey },
        { authorization: `Bearer ${other.token}` },
        { 'api-key': other.edgeKey },
        { 'api-key': [w.edgeKey, 'x'] },
        { authorization: `Bearer ${w.edgeKey}` },
        { 'api-key': `${w.edgeKey}\u0000` },
      ),
    },
  );

const SHORT_TEXTS = ['Aisle 5', 'Cleanup please', 'Price check $3.50', 'Team, thank you'];
const playFields = ['edgeId', 'text', 'actor', 'process'];

test('R1 playRadioText: any body and credential give a 200 or a clean 4xx', async () => {
  const valid = fc.record(
    {
      edgeId: fc.oneof({ weight: 5, arbitrary: fc.constant(world.edgeId) }, { weight: 1, arbitrary: fc.constantFrom(other.edgeId, 'no-such-edge', '') }),
      text: fc.constantFrom(...SHORT_TEXTS),
      actor: fc.constantFrom('Ann', 'store bot'),
      process: fc.boolean(),
    },
    { requiredKeys: ['edgeId', 'text', 'actor'] },
  );
  const probes = fc
    .tuple(radioCredential(world), extraQuery, bodyCases(valid, playFields))
    .map(([headers, extra, body]) => withBody({ method: 'POST', url: `/webhooks/incoming/generic?x=1${extra}`, headers }, body));
  // One probe of each outcome asked for below, run first: the draws alone may miss one.
  const play = (key: string, body: object): Probe => ({
    method: 'POST',
    url: '/webhooks/incoming/generic',
    headers: { 'content-type': 'application/json', 'api-key': key },
    payload: JSON.stringify(body),
  });
  const good = { edgeId: world.edgeId, text: 'Aisle 5', actor: 'Ann', process: false };
  const examples = [play(world.edgeKey, good), play(other.edgeKey, good), play(world.edgeKey, { ...good, text: undefined })];
  reached(await holdProperty(ctx.app, ctx.db, [world, other], probes, runs(50), examples), 200, 403, 422);
});

type Fields = Record<string, string | string[]>;

function formOf(fields: Fields): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of typeof value === 'string' ? [value] : value) form.append(name, v);
  return form.toString();
}

/** An R2 request: the form signed for this URL with the account's token (as the provider does) or
 * not, under this content type. */
function messagingProbe(
  path: string,
  fields: Fields,
  signature: 'right' | 'none' | string,
  contentType = 'application/x-www-form-urlencoded',
  authToken = world.authToken,
): Probe {
  const sig = signature === 'right' ? messagingSignature(authToken, `${ctx.config.publicBaseUrl}${path}`, fields) : signature;
  return {
    method: 'POST',
    url: path,
    headers: { 'content-type': contentType, ...(signature === 'none' ? {} : { 'x-messaging-signature': sig }) },
    payload: formOf(fields),
  };
}

const formValue: fc.Arbitrary<string | string[]> = fc.oneof(
  { weight: 5, arbitrary: hostileString.filter((s) => s.length < 70_000) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(...POISON.filter((p): p is string => typeof p === 'string')) },
  { weight: 1, arbitrary: fc.constantFrom('AC' + '\u0000'.repeat(32), `AC${'0'.repeat(31)}\u0000`, 'AC' + 'é'.repeat(32)) },
);

test('R2 playRadioWebhookMessage (and its hidden alias /webhooks/incoming/twilio/{edgeId}): any form, path, content type and signature give a 200 or a clean 4xx', async () => {
  const valid = fc.record({
    AccountSid: fc.oneof(
      { weight: 5, arbitrary: fc.constant(world.accountSid) },
      { weight: 1, arbitrary: fc.constantFrom(other.accountSid, `AC${'0'.repeat(32)}`) },
    ),
    Body: fc.constantFrom(...SHORT_TEXTS),
    From: fc.constantFrom('+15551230000', 'whatsapp:+15551230000'),
    To: fc.constant('+15559870000'),
    MessageSid: fc.constant('SM0123456789abcdef0123456789abcdef'),
  });
  const edit = fc.record({ field: fc.constantFrom('AccountSid', 'Body', 'From', 'To', 'Extra', 'Body[]'), value: fc.option(formValue, { nil: undefined }) });
  const probes = fc
    .record({
      edge: pathSegment([encodeURIComponent(world.edgeId), encodeURIComponent(other.edgeId)]),
      query: fc.oneof(
        fc.constant(''),
        extraQuery.map((q) => `?${q.slice(1)}`),
      ),
      fields: valid,
      edits: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(edit, { minLength: 1, maxLength: 2 }) }),
      signature: fc.oneof(
        { weight: 8, arbitrary: fc.constant('right') },
        { weight: 1, arbitrary: fc.constantFrom('none', '', 'AAAA', '=') },
        { weight: 1, arbitrary: hostileString.filter((s) => s.length < 1000 && /^[\x20-\x7e]*$/.test(s)) },
      ),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/x-www-form-urlencoded') },
        {
          weight: 2,
          arbitrary: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded; charset=utf-8', 'multipart/form-data; boundary=x'),
        },
      ),
      route: fc.constantFrom('messaging', 'twilio'),
    })
    .map(({ edge, query, fields, edits, signature, contentType, route }) => {
      const form: Fields = { ...fields };
      for (const { field, value } of edits) {
        if (value === undefined) delete form[field];
        else form[field] = value;
      }
      return messagingProbe(`/webhooks/incoming/${route}/${edge}${query}`, form, signature, contentType);
    });
  // One probe of each outcome asked for below, run first: with 60 draws alone, a run once drew no 200.
  const path = `/webhooks/incoming/messaging/${encodeURIComponent(world.edgeId)}`;
  const good: Fields = {
    AccountSid: world.accountSid,
    Body: SHORT_TEXTS[0] as string,
    From: '+15551230000',
    To: '+15559870000',
    MessageSid: 'SM0123456789abcdef0123456789abcdef',
  };
  const noBody: Fields = { ...good };
  delete noBody.Body;
  const examples = [messagingProbe(path, good, 'right'), messagingProbe(path, good, 'AAAA'), messagingProbe(path, noBody, 'right')];
  reached(await holdProperty(ctx.app, ctx.db, [world, other], probes, runs(60), examples), 200, 403, 422);
});

test('the transcripts listing and audio: any edge id, query and credential give a 200 or a clean 4xx', async () => {
  const played = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/incoming/generic',
    headers: { 'api-key': world.edgeKey },
    payload: { edgeId: world.edgeId, text: 'Aisle 5', actor: 'Ann', process: true },
  });
  assert.equal(played.statusCode, 200, played.body);
  const messageId = played.json<{ message_id: string }>().message_id;
  const probes = fc
    .record({
      edge: pathSegment([encodeURIComponent(world.edgeId), encodeURIComponent(other.edgeId)]),
      headers: radioCredential(world),
      limit: fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 3, arbitrary: fc.constantFrom('1', '20', '100') },
        { weight: 2, arbitrary: queryValue },
      ),
      before: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.constant(messageId) }, { weight: 2, arbitrary: queryValue }),
      audioOf: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constant(messageId) }, { weight: 1, arbitrary: pathSegment() }),
      extra: extraQuery,
    })
    .map(({ edge, headers, limit, before, audioOf, extra }): Probe => {
      const base = `/api/radio/edges/${edge}/transcripts`;
      if (audioOf !== null) return { method: 'GET', url: `${base}/${audioOf}/audio?x=1${extra}`, headers };
      const query = [limit === null ? '' : `limit=${limit}`, before === null ? '' : `before=${before}`].filter((p) => p !== '').join('&');
      return { method: 'GET', url: `${base}?${query}${extra}`, headers };
    });
  // One probe of each outcome asked for below, run first: a CI run's 60 draws reached no 200.
  const listing = `/api/radio/edges/${encodeURIComponent(world.edgeId)}/transcripts`;
  const examples: Probe[] = [
    { method: 'GET', url: `${listing}?limit=20`, headers: { 'api-key': world.edgeKey } },
    { method: 'GET', url: `${listing}?limit=20`, headers: { 'api-key': other.edgeKey } },
    { method: 'GET', url: `${listing}?limit=many`, headers: { 'api-key': world.edgeKey } },
  ];
  reached(await holdProperty(ctx.app, ctx.db, [world, other], probes, runs(60), examples), 200, 403, 422);
});

test('every known poison at every field of R1, in every R2 form field, and in the transcripts query is refused cleanly or applied', async () => {
  const json = { 'content-type': 'application/json' };
  // Aimed at the other organization's edge device: a body that passes validation is refused (403) by
  // the authorization that follows, so every path up to the speech engine runs without its cost
  // (the properties above reach the played path).
  const valid = { edgeId: other.edgeId, text: 'Aisle 5', actor: 'Ann', process: false };
  const r1: Probe[] = [
    ...poisonBodies(valid, playFields).map((payload) => ({
      method: 'POST' as const,
      url: '/webhooks/incoming/generic',
      headers: { ...json, 'api-key': world.edgeKey },
      payload,
    })),
    // A token looks the edge device up by the id it is given.
    ...poisonBodies(valid, ['edgeId']).map((payload) => ({
      method: 'POST' as const,
      url: '/webhooks/incoming/generic',
      headers: { ...json, authorization: `Bearer ${world.token}` },
      payload,
    })),
  ];
  await holdEach(ctx.app, ctx.db, [world, other], r1);
  const path = `/webhooks/incoming/messaging/${other.edgeId}`;
  const fields: Fields = { AccountSid: world.accountSid, Body: 'Aisle 5', From: '+15551230000', To: '+15559870000' };
  const poisons = [...POISON.filter((p): p is string => typeof p === 'string'), 'AC' + '\u0000'.repeat(32), `AC${'1'.repeat(31)}\u0000`, '\uD800'.repeat(34)];
  const r2: Probe[] = [];
  for (const field of ['AccountSid', 'Body', 'From', 'To', 'Other']) {
    for (const value of poisons) {
      r2.push(messagingProbe(path, { ...fields, [field]: value }, 'right'));
      r2.push(messagingProbe(path, { ...fields, [field]: value }, 'AAAA'));
    }
  }
  for (const edge of ['%00', 'a%00b', '%ED%A0%80', encodeURIComponent('\uFFFD'), 'x'.repeat(100)]) {
    r2.push(messagingProbe(`/webhooks/incoming/messaging/${edge}`, fields, 'right'));
  }
  await holdEach(ctx.app, ctx.db, [world, other], r2);
  const headers = { 'api-key': world.edgeKey };
  const queries = ['before=%00', 'before=a%00b', 'before=%ED%A0%80', 'limit=%00', 'limit=1e400', 'limit=-0', 'before=x&before=y'];
  await holdEach(
    ctx.app,
    ctx.db,
    [world, other],
    queries.map((q) => ({ method: 'GET' as const, url: `/api/radio/edges/${world.edgeId}/transcripts?${q}`, headers })),
  );
  const r3 = [
    'edge_id=%00',
    'edge_id=a%00b',
    `edge_id=${world.edgeId}&cursor=%00`,
    `edge_id=${world.edgeId}&cursor=eyJ4IjoxfQ`,
    `edge_id=${world.edgeId}&from=%00`,
    `edge_id=${world.edgeId}&from=2026-13-45T99:99:99Z`,
    `edge_id=${world.edgeId}&from=2027-01-01T00:00:00Z&to=2026-01-01T00:00:00Z`,
    `edge_id=${world.edgeId}&limit=1e400`,
    `edge_id=${world.edgeId}&to=${'9'.repeat(39)}`,
    '',
    `edge_id=${other.edgeId}`,
  ];
  await holdEach(
    ctx.app,
    ctx.db,
    [world, other],
    r3.map((q) => ({ method: 'GET' as const, url: `/api/radio/transcripts?${q}`, headers })),
  );
  await holdEach(
    ctx.app,
    ctx.db,
    [world, other],
    ['%00', 'a%00b', '%ED%A0%80', 'x'.repeat(101)].map((id) => ({ method: 'GET' as const, url: `/api/radio/messages/${id}/audio`, headers })),
  );
  for (const edge of ['%00', 'a%00b']) {
    await holdEach(
      ctx.app,
      ctx.db,
      [world, other],
      [
        { method: 'GET', url: `/api/radio/edges/${edge}/transcripts`, headers: { authorization: `Bearer ${world.token}` } },
        { method: 'GET', url: `/api/radio/edges/${world.edgeId}/transcripts/${edge}/audio`, headers },
      ],
    );
  }
});
