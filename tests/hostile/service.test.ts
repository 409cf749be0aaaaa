// Hostile input on the service's own endpoints (/healthz, /readyz, the broker auth endpoints) and a
// sweep of every operation the OpenAPI document lists, each with every kind of credential and any
// path, query and body: never a 5xx, errors in the contract's shape, only documented statuses, and
// a refused request changes nothing stored.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { bodyCases, extraQuery, hostileString, hostileValue, MIB, pathSegment, queryValue, withBody } from '../support/arbitraries.ts';
import { assertContractAnswer, describe, refusalGuard, runs, send, type Probe } from '../support/contract.ts';
import { makeWorld, provisionToken, TEST_SECRET, testApp, testConfig, type TestContext, type World } from '../support/world.ts';
import { fromPage, makePerson, signInHttp, type TestPerson } from '../support/people.ts';

const BROKER_SECRET = 'hostile-broker-secret-0123456789';

let ctx: TestContext;
let world: World;
/** A call button hub's token (scope buttons) of the world's organization. */
let hubToken: string;
/** A token of the admin scope, and an org_admin with a password (each session operation signs in anew). */
let adminToken: string;
let admin: TestPerson;
before(async () => {
  ctx = await testApp({ config: testConfig({ MQTT_AUTH_SECRET: BROKER_SECRET }) });
  world = await makeWorld(ctx.db, ctx.clock);
  hubToken = await provisionToken(ctx.db, ctx.clock, world.organizationId, ['buttons']);
  adminToken = await provisionToken(ctx.db, ctx.clock, world.organizationId, ['admin']);
  admin = await makePerson(ctx.db, ctx.clock, world.organizationId);
});

/** The operations of the contract (section 1) and the service's own. */
const CONTRACT_OPERATIONS = [
  'getLocationLockers',
  'createLockerOrder',
  'commandCabinet',
  'completeCabinetOrder',
  'commandByOpenCode',
  'completeOrderByOpenCode',
  'updateLockerStatus',
  'createCfhRequest',
  'claimCfhRequest',
  'markCfhOnTheWay',
  'completeCfhRequest',
  'cancelCfhRequest',
  'getCfhRequest',
  'playRadioText',
  'playRadioWebhookMessage',
  'listRadioTranscripts',
  'getRadioTranscriptAudio',
  'listRadioEdgeTranscripts',
  'getRadioMessageAudio',
  'cancelLockerOrder',
  'renewOpenCode',
  'listDevices',
  'listWebhookDeliveries',
  'redeliverWebhook',
  'streamCfhRequest',
  'listCfhRequests',
  'streamCfhRequests',
  'createDisplayRequest',
  'pressCallButton',
  'updateCallButtonRequest',
  'healthz',
  'readyz',
  'mqttEmqxAuthenticate',
  'mqttEmqxAuthorize',
  'mqttMosquittoUser',
  'mqttMosquittoSuperuser',
  'mqttMosquittoAcl',
];

interface Operation {
  method: Probe['method'];
  path: string;
  operationId: string;
  params: string[];
  documented: Set<string>;
}

async function operations(): Promise<Operation[]> {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { operationId: string; responses?: Record<string, unknown> }>>;
  }>();
  return Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => ({
      method: method.toUpperCase() as Probe['method'],
      path,
      operationId: op.operationId,
      params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string),
      documented: new Set(Object.keys(op.responses ?? {})),
    })),
  );
}

/** Refusals made before an operation is chosen (the router's), not the operation's own. */
const ROUTER_CODES = new Set(['bad_url', 'uri_too_long']);

/** A dot segment ('..', '%2e%2e', '.') is resolved by the URL parser before the request is made (by
 * any HTTP client, and by inject): `/displays/../requests` asks another operation, whose statuses
 * are its own, so it is no answer of the operation the path was made from. */
const DOT_SEGMENT = /\/(\.|%2e){1,2}(\/|$)/i;

/** Every credential the service knows, each present or not, right or wrong. */
const credentials = (w: World): fc.Arbitrary<{ query: string; headers: Record<string, string> }> =>
  fc
    .record({
      secret: fc.oneof(
        fc.constant(''),
        fc.constant(`secret_token=${encodeURIComponent(TEST_SECRET)}&`),
        queryValue.map((v) => `secret_token=${v}&`),
      ),
      apiKey: fc.constantFrom(undefined, w.lockerKey, w.edgeKey, 'wrong-key-0123456789'),
      authorization: fc.constantFrom(undefined, `Bearer ${w.token}`, `Bearer ${BROKER_SECRET}`, 'Bearer wrong-token-0123456789', `Basic ${w.token}`),
      signature: fc.constantFrom(undefined, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=', ''),
    })
    .map(({ secret, apiKey, authorization, signature }) => ({
      query: secret,
      headers: {
        ...(apiKey === undefined ? {} : { 'api-key': apiKey }),
        ...(authorization === undefined ? {} : { authorization }),
        ...(signature === undefined ? {} : { 'x-messaging-signature': signature }),
      },
    }));

/** Path values of the world, so that some probes reach real rows. */
const goodValues = (w: World) => [String(w.locationId), String(w.cabinetIds[0]), w.edgeId, String(w.lockerId)];

const anyBody = bodyCases(fc.dictionary(fc.string({ maxLength: 12 }), hostileValue, { maxKeys: 5 }), [
  'a',
  'message_id',
  'cabinets',
  'username',
  'edgeId',
  'text',
]);

test('the OpenAPI document lists every operation of the contract', async () => {
  const ids = new Set((await operations()).map((o) => o.operationId));
  for (const id of CONTRACT_OPERATIONS) assert.ok(ids.has(id), `${id} is in /openapi.json`);
});

test('every operation, with any credential, path, query and body: a 2xx or a clean, documented 4xx that changes nothing', async () => {
  const ops = await operations();
  const probes = fc.record({
    op: fc.constantFrom(...ops),
    method: fc.oneof(
      { weight: 9, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom<Probe['method']>('GET', 'POST', 'PUT', 'DELETE', 'PATCH') },
    ),
    segment: pathSegment(goodValues(world)),
    creds: credentials(world),
    extra: extraQuery,
    body: anyBody,
  });
  const seen = new Map<string, Set<number>>();
  const undocumented = new Set<string>();
  const guard = refusalGuard(ctx.app, ctx.db, [world]);
  await fc.assert(
    fc.asyncProperty(probes, async ({ op, method, segment, creds, extra, body }) => {
      const path = op.path.replace(/\{\w+\}/g, segment);
      const probe = withBody({ method: method ?? op.method, url: `${path}?${creds.query}z=1${extra}`, headers: creds.headers }, body);
      // GET and HEAD carry no body: a client that sends one anyway is still answered.
      const res = await guard(probe);
      (seen.get(op.operationId) ?? seen.set(op.operationId, new Set()).get(op.operationId))?.add(res.statusCode);
      if (method !== null && method !== op.method) return;
      if (DOT_SEGMENT.test(path)) return;
      const code = res.statusCode >= 400 ? res.json<{ code: string }>().code : '';
      if (ROUTER_CODES.has(code)) return;
      if (!op.documented.has(String(res.statusCode))) undocumented.add(`${op.operationId} ${res.statusCode} ${code}`);
    }),
    // Three draws per operation: each is tried with a chance of 95%, so 80% of them always are (200
    // draws over 120 operations left that to luck).
    { numRuns: runs(Math.max(200, 3 * ops.length)) },
  );
  assert.deepEqual([...undocumented].sort(), [], 'every status an operation answers is documented in the OpenAPI document');
  assert.ok(seen.size >= ops.length * 0.8, `most operations were tried: ${[...seen.keys()].join(', ')}`);
});

/** The right credential of an operation, by its path: a session operation gets a session of its own. */
async function credentialOf(path: string): Promise<Record<string, string>> {
  if (path.startsWith('/api/session/') || path.startsWith('/staff/api/')) return fromPage(await signInHttp(ctx.app, admin));
  if (path.startsWith('/api/admin/')) return { authorization: `Bearer ${adminToken}` };
  if (path === '/api/lockers/cabinet/status') return { 'api-key': world.lockerKey };
  if (path.startsWith('/internal/mqtt/')) return { authorization: `Bearer ${BROKER_SECRET}` };
  if (path.startsWith('/webhooks/incoming/generic') || path.startsWith('/api/radio/')) return { 'api-key': world.edgeKey };
  if (path.startsWith('/api/callbutton/')) return { authorization: `Hub ${hubToken}` };
  if (path.startsWith('/api/admin/')) return { authorization: `Bearer ${adminToken}` };
  return { authorization: `Bearer ${world.token}` };
}

test('every operation with a body, given its right credential, answers another content type with 415 and a body over 1 MiB with 413, as documented', async () => {
  const problems: string[] = [];
  const bodies: [string | null, string, number | null][] = [
    ['text/plain', '{}', null],
    ['application/xml', '<a/>', 415],
    ['multipart/form-data; boundary=x', '--x--', 415],
    ['application/octet-stream', '\u0000', 415],
    ['application/json', JSON.stringify({ pad: 'z'.repeat(MIB + 1) }), 413],
    ['application/json', '{', null],
    ['application/json', '', null],
    [null, '{}', null],
    ['application/x-www-form-urlencoded', 'a=1', null],
  ];
  const guard = refusalGuard(ctx.app, ctx.db, [world]);
  for (const op of await operations()) {
    if (op.method !== 'POST' && op.method !== 'PUT') continue;
    const path = op.path.replace(/\{\w+\}/g, encodeURIComponent(world.edgeId));
    for (const [contentType, payload, expected] of bodies) {
      const probe: Probe = {
        method: op.method,
        url: `${path}?secret_token=${encodeURIComponent(TEST_SECRET)}`,
        payload,
        headers: { ...(await credentialOf(op.path)), ...(contentType === null ? {} : { 'content-type': contentType }) },
      };
      const res = await guard(probe);
      if (!op.documented.has(String(res.statusCode))) problems.push(`${op.operationId} ${res.statusCode} for ${contentType}: undocumented`);
      if (expected !== null && res.statusCode !== expected) problems.push(`${op.operationId} ${res.statusCode} for ${contentType}: expected ${expected}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('/healthz and /readyz answer 200 whatever the query and headers', async () => {
  const probes = fc.record({
    path: fc.constantFrom('/healthz', '/readyz'),
    extra: extraQuery,
    headers: fc.dictionary(
      fc.constantFrom('authorization', 'api-key', 'accept', 'x-forwarded-for', 'content-type'),
      hostileString.filter((s) => s.length < 1000 && /^[\t\x20-\x7e]*$/.test(s)),
    ),
  });
  await fc.assert(
    fc.asyncProperty(probes, async ({ path, extra, headers }) => {
      const probe: Probe = { method: 'GET', url: `${path}?a=1${extra}`, headers };
      const res = await send(ctx.app, probe);
      assertContractAnswer(res, describe(probe));
      assert.equal(res.statusCode, 200, describe(probe));
    }),
    { numRuns: runs(60) },
  );
  const head = await send(ctx.app, { method: 'HEAD', url: '/healthz' });
  assert.equal(head.statusCode, 200);
});

test("the broker auth endpoints: any body and secret give a 2xx or a clean 4xx, and never allow a device another device's topics", async () => {
  const other = await makeWorld(ctx.db, ctx.clock);
  const user = fc.constantFrom(`locker:${world.lockerId}`, `edge:${world.edgeId}`, `locker:${other.lockerId}`, 'storeops', '', 'locker:', 'edge:#', 'locker:+');
  const password = fc.constantFrom(world.lockerKey, world.edgeKey, other.lockerKey, '');
  const topic = fc.constantFrom(
    `lockers/${world.lockerId}/commands`,
    `lockers/${world.lockerId}/acks`,
    `lockers/${other.lockerId}/commands`,
    `radio/${world.edgeId}/play`,
    '#',
    'lockers/+/commands',
    '',
  );
  const endpoints: { path: string; valid: fc.Arbitrary<Record<string, unknown>>; fields: string[] }[] = [
    {
      path: 'emqx/authn',
      valid: fc.record({ username: user, password, clientid: fc.string({ maxLength: 10 }) }),
      fields: ['username', 'password', 'clientid'],
    },
    {
      path: 'emqx/authz',
      valid: fc.record({ username: user, topic, action: fc.constantFrom('publish', 'subscribe', 'all') }),
      fields: ['username', 'topic', 'action', 'clientid'],
    },
    { path: 'mosquitto/user', valid: fc.record({ username: user, password }), fields: ['username', 'password', 'clientid'] },
    { path: 'mosquitto/superuser', valid: fc.record({ username: user }), fields: ['username'] },
    {
      path: 'mosquitto/acl',
      valid: fc.record({ username: user, topic, acc: fc.constantFrom(1, 2, 3, 4, '1', '4') }),
      fields: ['username', 'topic', 'acc', 'clientid'],
    },
  ];
  const secret = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom<Record<string, string>>({ authorization: `Bearer ${BROKER_SECRET}` }, { 'user-agent': BROKER_SECRET }) },
    { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({}, { authorization: `Bearer ${BROKER_SECRET}x` }, { 'user-agent': 'mosquitto' }) },
  );
  for (const endpoint of endpoints) {
    const probes = fc
      .tuple(secret, bodyCases(endpoint.valid, endpoint.fields))
      .map(([headers, body]) => withBody({ method: 'POST', url: `/internal/mqtt/${endpoint.path}`, headers }, body));
    const guard = refusalGuard(ctx.app, ctx.db, [world, other]);
    await fc.assert(
      fc.asyncProperty(probes, async (probe) => {
        const res = await guard(probe);
        if (res.statusCode !== 200 || endpoint.path !== 'emqx/authz' || typeof probe.payload !== 'string') return;
        let asked: { username?: unknown; topic?: unknown };
        try {
          // Fastify's parser drops a leading byte order mark.
          asked = JSON.parse(probe.payload.replace(/^\uFEFF/, '')) as typeof asked;
        } catch {
          return;
        }
        if (res.json<{ result: string }>().result === 'allow') {
          // A device may touch only its own topics.
          assert.ok(typeof asked.topic === 'string' && typeof asked.username === 'string', describe(probe));
          const [kind, id] = asked.username.split(':');
          assert.ok(asked.topic.split('/')[1] === id && ['locker', 'edge'].includes(kind ?? ''), `allowed only on its own topics: ${describe(probe)}`);
        }
      }),
      { numRuns: runs(30) },
    );
  }
});

test('requests beside the routes (unknown paths, odd methods, odd URLs) get a clean 4xx', async () => {
  const urls = [
    '/',
    '//',
    '/api',
    '/api/lockers',
    '/api/lockers/',
    '/api/lockers/locations/',
    '/api/lockers/locations//',
    '//api/lockers/orders',
    '/api/lockers/orders/',
    '/api/callforhelp/v1/tracking/',
    '/%',
    '/%zz',
    '/api/%2e%2e/healthz',
    '/api/lockers/locations/%E2%82',
    `/${'x'.repeat(100_000)}`,
    '/api/lockers/locations/1/../../../healthz',
    '/healthz/..',
    '/api/lockers/cabinet/status%00',
    '/\u00e9',
  ];
  const guard = refusalGuard(ctx.app, ctx.db, [world]);
  for (const url of urls) {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
      const probe: Probe = {
        method: method as Probe['method'],
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' ? undefined : '{}',
      };
      await guard(probe);
    }
  }
});
