// Hostile input on what version 2 added beside the OpenAPI sweep of service.test.ts: the customer's
// capabilities (C4, C5, C6 by message_id with no token; C9 by display key) and the customer pages
// (/help/{display_key}, /help/t/{message_id}, hidden from the document), the call button hub's
// token (B1, B2, any scheme word), /metrics, and every console route with every kind of broken
// session and CSRF. Never a 5xx, errors in the contract's shape (a page's 404 is a page), and a
// refused request changes nothing stored.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { bodyCases, extraQuery, hostileString, pathSegment, poisonBodies, queryValue, withBody } from '../support/arbitraries.ts';
import { describe, holdEach, holdProperty, reached, refusalGuard, runs, send, snapshot, type Probe } from '../support/contract.ts';
import { makeCfhWorld, type CfhWorld } from '../cfh/support.ts';
import { consoleWorld, fromPage, makePerson, signInHttp, type Signed } from '../console/support.ts';
import { testApp, testConfig, type TestContext } from '../support/world.ts';

const METRICS_TOKEN = 'hostile-metrics-token-0123456789';

let ctx: TestContext;
let w: CfhWorld;
/** Open requests of w, made by the call button (so B2 can reach them). */
let ids: string[];
before(async () => {
  ctx = await testApp({ config: testConfig({ METRICS_TOKEN }) });
  w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 0 } });
  ids = [];
  for (let i = 0; i < 3; i++) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${w.token}` },
      payload: { location_id: w.locationId, option_id: w.optionId },
    });
    assert.equal(res.statusCode, 201, res.body);
    ids.push(res.json<{ message_id: string }>().message_id);
  }
});

/** A customer page's answer: 200 or 404 as an HTML page, else a clean JSON 4xx; never a 5xx. */
function assertPageAnswer(res: LightMyRequestResponse, what: string): void {
  const context = `${what}\n-> ${res.statusCode} ${res.body.slice(0, 300)}`;
  assert.ok(res.statusCode < 500, `no input produces a 5xx: ${context}`);
  const isPage = /^text\/html/.test(String(res.headers['content-type']));
  // A URL the router never gives to a page (`/help/%2e%2e` is `/`) is the router's JSON 404.
  if (res.statusCode === 200 || (res.statusCode === 404 && isPage)) {
    assert.ok(isPage, `a page: ${context}`);
    assert.doesNotMatch(res.body, /\n\s+at /, `no stack trace: ${context}`);
    return;
  }
  assert.ok(res.statusCode >= 400, context);
  const body = res.json<{ message?: unknown; code?: unknown }>();
  assert.equal(typeof body.message, 'string', context);
  assert.equal(typeof body.code, 'string', context);
}

test('the customer pages, with any key, message id, query and headers: a page (200 or 404) or a clean 4xx, and nothing stored changes', async () => {
  const probes = fc.record({
    page: fc.constantFrom('/help/', '/help/t/'),
    segment: pathSegment([w.displayKey, ...ids]),
    lang: fc.oneof(
      fc.constant(''),
      fc.constantFrom('&lang=fr', '&lang=en', '&lang=', '&lang=xx', '&lang=fr&lang=en', '&lang[]=fr'),
      queryValue.map((v) => `&lang=${v}`),
    ),
    extra: extraQuery,
    headers: fc.dictionary(
      fc.constantFrom('authorization', 'accept-language', 'cookie', 'x-forwarded-for', 'accept'),
      hostileString.filter((s) => s.length < 500 && /^[\t\x20-\x7e]*$/.test(s)),
      { maxKeys: 3 },
    ),
  });
  const before = await snapshot(ctx.db, w);
  let pages = 0;
  await fc.assert(
    fc.asyncProperty(probes, async ({ page, segment, lang, extra, headers }) => {
      const probe: Probe = { method: 'GET', url: `${page}${segment}?z=1${lang}${extra}`, headers };
      const res = await send(ctx.app, probe);
      assertPageAnswer(res, describe(probe));
      if (res.statusCode === 200) pages++;
    }),
    { numRuns: runs(150) },
  );
  assert.ok(pages > 0, 'the real pages were reached too');
  assert.equal(await snapshot(ctx.db, w), before, 'reading a page writes nothing');
});

test('C4, C5 and C6 without a token (the message_id is the credential): any id and body give a 200 or a clean 4xx', async () => {
  const guard = refusalGuard(ctx.app, ctx.db, [w]);
  const known = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...ids) }, { weight: 3, arbitrary: queryValue });
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fc.tuple(known, extraQuery, fc.constantFrom('tracking', 'stream')), async ([id, extra, kind]) => {
      // A stream with a real id stays open: only refusals are sent through inject here (streams.test.ts holds the open ones).
      if (kind === 'stream' && ids.includes(id)) return;
      const res = await guard({ method: 'GET', url: `/api/callforhelp/v1/tracking${kind === 'stream' ? '/stream' : ''}?message_id=${id}${extra}` });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }),
    { numRuns: runs(100) },
  );
  reached(statuses, 200, 404);
  const cancel = fc.record({ message_id: fc.oneof(fc.constantFrom(...ids.slice(1)), fc.string({ minLength: 1, maxLength: 70 })) });
  const probes = fc
    .tuple(extraQuery, bodyCases(cancel, ['message_id']))
    .map(([extra, body]) => withBody({ method: 'POST', url: `/api/callforhelp/cancel?x=1${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [w], probes, runs(60)), 404, 422);
  await holdEach(
    ctx.app,
    ctx.db,
    [w],
    poisonBodies({ message_id: ids[0] }, ['message_id']).map((payload) => ({
      method: 'POST' as const,
      url: '/api/callforhelp/cancel',
      headers: { 'content-type': 'application/json' },
      payload,
    })),
  );
});

test('C9 by display key: any key and body give a 201 or a clean 4xx', async () => {
  const valid = fc.oneof(
    fc.record({ option_id: fc.constantFrom(w.optionId, w.secondOptionId, 1, -1) }),
    fc.record({
      custom_text: fc.oneof(
        fc.constantFrom('Need a ladder', ''),
        hostileString.filter((s) => s.length < 300),
      ),
    }),
  );
  const probes = fc
    .tuple(pathSegment([w.displayKey]), extraQuery, bodyCases(valid, ['option_id', 'custom_text']))
    .map(([key, extra, body]) => withBody({ method: 'POST', url: `/api/callforhelp/displays/${key}/requests?x=1${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [w], probes, runs(100)), 201, 404, 422);
});

test('B1 and B2 with the hub token under any scheme word, any body: a 200 or a clean 4xx', async () => {
  const authorization = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`Hub ${w.hubToken}`, `Bearer ${w.hubToken}`, `Token ${w.hubToken}`, `X ${w.hubToken}`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'Hub', `Hub ${w.token}`, w.hubToken, `Hub  ${w.hubToken} x`, `Hub ${w.hubToken}\u0000`) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 300 && /^[\t\x20-\x7e]*$/.test(s)).map((s) => `Hub ${s}`) },
  );
  const press = fc.record(
    {
      device_key: fc.oneof(fc.constant(w.deviceKey), fc.constant(w.deviceKey.toLowerCase()), fc.string({ maxLength: 30 })),
      voltage: fc.oneof(fc.double({ noNaN: true, min: -10, max: 10 }), fc.constant(2.3)),
      button: fc.integer({ min: -2, max: 3 }),
    },
    { requiredKeys: ['device_key'] },
  );
  const update = fc.record(
    {
      device_key: fc.oneof(fc.constant(w.deviceKey), fc.string({ maxLength: 30 })),
      update_type: fc.constantFrom('completed', 'close', 'customer_canceled', 'other'),
      reason: fc.constantFrom('helped', ''),
    },
    { requiredKeys: ['device_key', 'update_type'] },
  );
  const pressProbes = fc
    .tuple(authorization, bodyCases(press, ['device_key', 'voltage', 'button']))
    .map(([auth, body]) => withBody({ method: 'POST', url: '/api/callbutton/press', headers: { authorization: auth } }, body));
  // The 404s run first (a button or a request of no one): the draws reach them about six times in a hundred.
  const json = (body: object) => ({ headers: { authorization: `Hub ${w.hubToken}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const pressUnknown: Probe = { method: 'POST', url: '/api/callbutton/press', ...json({ device_key: 'no-such-button' }) };
  reached(await holdProperty(ctx.app, ctx.db, [w], pressProbes, runs(100), [pressUnknown]), 200, 401, 404, 422);
  const pressed = await ctx.db.query<{ message_id: string }>(
    "SELECT message_id FROM cfh_requests WHERE organization_id = $1 AND source = 'call_button' AND NOT is_closed",
    [w.organizationId],
  );
  const targets = [...pressed.map((r) => r.message_id), ...ids, 'no-such-request'];
  const updateProbes = fc
    .tuple(authorization, fc.constantFrom(...targets).map(encodeURIComponent), bodyCases(update, ['device_key', 'update_type', 'reason']))
    .map(([auth, id, body]) => withBody({ method: 'PUT', url: `/api/callbutton/${id}`, headers: { authorization: auth } }, body));
  const updateUnknown: Probe = {
    method: 'PUT',
    url: '/api/callbutton/no-such-request',
    ...json({ device_key: w.deviceKey, update_type: 'completed', reason: 'helped' }),
  };
  reached(await holdProperty(ctx.app, ctx.db, [w], updateProbes, runs(100), [updateUnknown]), 401, 404, 422);
});

test('/metrics: only its token opens it; anything else is a clean 401 and never a 5xx', async () => {
  const statuses = new Map<number, number>();
  const authorization = fc.oneof(
    fc.constantFrom<string | undefined>(
      undefined,
      `Bearer ${METRICS_TOKEN}`,
      `bearer ${METRICS_TOKEN}`,
      `Bearer ${METRICS_TOKEN}x`,
      `Bearer ${w.token}`,
      'Bearer',
      '',
    ),
    hostileString.filter((s) => s.length < 500 && /^[\t\x20-\x7e]*$/.test(s)).map((s) => `Bearer ${s}`),
  );
  const guard = refusalGuard(ctx.app, ctx.db, [w]);
  await fc.assert(
    fc.asyncProperty(authorization, extraQuery, async (auth, extra) => {
      const res = await guard({ method: 'GET', url: `/metrics?x=1${extra}`, headers: auth === undefined ? {} : { authorization: auth } });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode === 200) assert.equal(auth?.replace(/^bearer/i, 'Bearer'), `Bearer ${METRICS_TOKEN}`);
    }),
    { numRuns: runs(60) },
  );
  reached(statuses, 200, 401);
});

/** Every console route, as its page calls it (bodies valid), at this world's objects. */
function consoleRoutes(c: Awaited<ReturnType<typeof consoleWorld>>, messageId: string): Probe[] {
  const loc = c.locationId;
  const gets = [
    'queue',
    'lockers',
    'devices',
    'radio',
    'webhooks',
    'reports?from=2026-01-01&to=2026-01-31',
    'requests.csv?from=2026-01-01&to=2026-01-31',
    'stream',
  ].map((p): Probe => ({ method: 'GET', url: `/console/api/locations/${loc}/${p}` }));
  const post = (url: string, body: unknown): Probe => ({ method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return [
    ...gets,
    { method: 'GET', url: `/console/api/radio/${encodeURIComponent(c.edgeId)}/messages/no-such/audio` },
    post(`/console/api/cfh/${messageId}/claim`, {}),
    post(`/console/api/cfh/${messageId}/complete`, { outcome: 'helped' }),
    post(`/console/api/cabinets/${c.cabinetIds[0]}/open`, { reason: 'x' }),
    post(`/console/api/cabinets/${c.cabinetIds[1]}/disable`, {}),
    post('/console/api/orders/1/cancel', {}),
    post(`/console/api/radio/${encodeURIComponent(c.edgeId)}/announce`, { text: 'Hello store' }),
    post('/console/api/webhooks/deliveries/1/redeliver', {}),
    post('/api/session/end', {}),
  ];
}

test('every console route refuses a missing, forged, expired or signed-out session (401) and, for a change, a missing or wrong CSRF token or Origin (403), changing nothing', async () => {
  const c = await consoleWorld(ctx.db, ctx.clock);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${c.token}` },
    payload: { location_id: c.locationId, option_id: c.optionId },
  });
  const messageId = created.json<{ message_id: string }>().message_id;
  const live = await signInHttp(ctx.app, c.admin);
  const other = await signInHttp(ctx.app, await makePerson(ctx.db, ctx.clock, c.organizationId, { name: 'Kim' }));
  const ended: Signed = await signInHttp(ctx.app, await makePerson(ctx.db, ctx.clock, c.organizationId, { name: 'Gone' }));
  assert.equal((await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(ended) })).statusCode, 200);
  const guard = refusalGuard(ctx.app, ctx.db, [c]);
  const sessions: [string, Record<string, string>][] = [
    ['no cookie', {}],
    ['a forged cookie', { cookie: 'storeops_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
    ['a malformed cookie', { cookie: 'storeops_session=%00; storeops_session=x' }],
    ['a signed-out session', { cookie: ended.cookie, 'x-csrf-token': ended.csrf, origin: 'http://storeops.test' }],
  ];
  for (const probe of consoleRoutes(c, messageId)) {
    for (const [what, headers] of sessions) {
      const res = await guard({ ...probe, headers: { ...probe.headers, ...headers } });
      assert.equal(res.statusCode, 401, `${what}: ${describe(probe)}`);
    }
    if (probe.method !== 'POST') continue;
    const forged: [string, Record<string, string>][] = [
      ['no CSRF token', { cookie: live.cookie, origin: 'http://storeops.test' }],
      ["another session's CSRF token", { cookie: live.cookie, 'x-csrf-token': other.csrf }],
      ['a wrong Origin', { ...fromPage(live), origin: 'http://storeops.test.evil.example' }],
      ['a null Origin', { ...fromPage(live), origin: 'null' }],
      ['a cross-site fetch', { ...fromPage(live), 'sec-fetch-site': 'same-site' }],
    ];
    for (const [what, headers] of forged) {
      const res = await guard({ ...probe, headers: { ...probe.headers, ...headers } });
      assert.equal(res.statusCode, 403, `${what}: ${describe(probe)}`);
      assert.equal(res.json<{ code: string }>().code, 'csrf_failed');
    }
  }
  // The live session is still live: none of that ended it.
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: live.cookie } })).json().signed_in, true);
});

test("an expired session is refused on every console route, and a session on another location's or organization's objects finds nothing", async (t) => {
  const own = await testApp({ t });
  const c = await consoleWorld(own.db, own.clock);
  const stranger = await consoleWorld(own.db, own.clock);
  const created = await own.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${stranger.token}` },
    payload: { location_id: stranger.locationId, option_id: stranger.optionId },
  });
  const strangersRequest = created.json<{ message_id: string }>().message_id;
  const s = await signInHttp(own.app, c.admin);
  const guard = refusalGuard(own.app, own.db, [c, stranger]);
  for (const probe of consoleRoutes(stranger, strangersRequest)) {
    if (probe.url === '/api/session/end') continue;
    const res = await guard({ ...probe, headers: { ...probe.headers, ...fromPage(s) } });
    assert.equal(res.statusCode, 404, `another organization's: ${describe(probe)}`);
  }
  own.clock.advance(12 * 3600_000 + 1000);
  for (const probe of consoleRoutes(c, strangersRequest)) {
    const res = await guard({ ...probe, headers: { ...probe.headers, ...fromPage(s) } });
    assert.equal(res.statusCode, 401, `expired: ${describe(probe)}`);
  }
});

test('console routes with hostile path values, bodies and sessions: a 2xx or a clean 4xx', async () => {
  const c = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, c.admin);
  const templates = [
    'GET /console/api/locations/{}/queue',
    'GET /console/api/locations/{}/reports',
    'GET /console/api/locations/{}/requests.csv',
    'GET /console/api/radio/{}/messages/{}/audio',
    'POST /console/api/cfh/{}/claim',
    'POST /console/api/cfh/{}/complete',
    'POST /console/api/cabinets/{}/close',
    'POST /console/api/orders/{}/open_code',
    'POST /console/api/radio/{}/announce',
    'POST /console/api/webhooks/deliveries/{}/redeliver',
    'POST /api/session',
    'GET /console/assets/{}',
    'GET /console/{}',
  ];
  const body = fc.dictionary(
    fc.constantFrom('text', 'outcome', 'reason', 'rear', 'email', 'password', 'pin', 'badge_code'),
    fc.oneof(
      hostileString.filter((x) => x.length < 600),
      fc.boolean(),
      fc.integer(),
    ),
    { maxKeys: 3 },
  );
  const probes = fc
    .record({
      route: fc.constantFrom(...templates),
      segment: pathSegment([String(c.locationId), String(c.cabinetIds[2]), c.edgeId]),
      query: fc.oneof(fc.constant(''), fc.constantFrom('from=2026-01-01&to=2026-01-31', 'from=2026-13-01&to=x', 'from=0001-01-01&to=9999-12-31')),
      body: bodyCases(body, ['text', 'outcome', 'reason', 'rear']),
    })
    .map(({ route, segment, query, body: b }) => {
      const [method, path] = route.split(' ') as ['GET' | 'POST', string];
      const probe: Probe = { method, url: `${path.replaceAll('{}', segment)}?${query}`, headers: fromPage(s) };
      return method === 'GET' ? probe : withBody(probe, b);
    });
  await holdProperty(ctx.app, ctx.db, [c], probes, runs(150));
});
