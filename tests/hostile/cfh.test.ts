// Property-based hostile input on Call for Help (C0-C5): malformed bodies, query values, content
// types, bearer headers. Never a 5xx, errors in the contract's shape, and a refused request
// changes nothing stored.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { bodyCases, extraQuery, hostileString, poisonBodies, queryValue, withBody, withUnknownFields } from '../support/arbitraries.ts';
import { holdEach, holdProperty, reached, runs, type Probe } from '../support/contract.ts';
import { openCfhRequests } from '../support/requests.ts';
import { makeWorld, testApp, type TestContext, type World } from '../support/world.ts';
import { makeCfhWorld } from '../cfh/support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** The Authorization header: the world's token in most runs. */
const bearer = (world: World): fc.Arbitrary<Record<string, string | string[]>> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant({ authorization: `Bearer ${world.token}` }) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 10_000).map((s) => ({ authorization: `Bearer ${s}` })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string | string[]>>(
        {},
        { authorization: '' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer ' },
        { authorization: `bearer  ${world.token}  ` },
        { authorization: `Basic ${world.token}` },
        { authorization: `Bearer ${world.token} extra` },
        { authorization: [`Bearer ${world.token}`, 'Bearer x'] },
        { 'api-key': world.lockerKey },
        { authorization: `Bearer ${world.token}\u0000` },
      ),
    },
  );

const createFields = ['location_id', 'option_id', 'device_id', 'display_id', 'callbutton_id', 'chat_channel_id'];
const staffFields = ['message_id', 'channel_id', 'claimed_by', 'claimed_by_user_id', 'request_from'];

const staff = (messageIds: readonly string[]) =>
  fc.record(
    {
      message_id: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...messageIds) }, { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }),
      channel_id: fc.constantFrom('C-floor', 'C-2'),
      claimed_by: fc.constantFrom('Ann', 'Bob'),
      claimed_by_user_id: fc.constantFrom('U-ann', 'U-bob'),
      request_from: fc.constantFrom('provider_a', 'provider_b', 'provider_c', 'web_interface'),
    },
    { requiredKeys: ['message_id', 'channel_id', 'claimed_by', 'claimed_by_user_id'] },
  );

test('C0 createCfhRequest: any body gives a 201 or a clean 4xx', async () => {
  const world = await makeCfhWorld(ctx.db, ctx.clock);
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  // The world's own button and display, another organization's, or none of anyone's.
  const deviceIds = (own: number, theirs: number) =>
    fc.oneof({ weight: 3, arbitrary: fc.constant(own) }, fc.constant(theirs), fc.integer({ min: 0, max: 100 }));
  const valid = fc.record(
    {
      location_id: fc.oneof({ weight: 3, arbitrary: fc.constant(world.locationId) }, { weight: 1, arbitrary: fc.constant(other.locationId) }),
      option_id: fc.oneof({ weight: 3, arbitrary: fc.constant(world.optionId) }, { weight: 1, arbitrary: fc.constant(other.optionId) }),
      device_id: fc.integer({ min: 0, max: 100 }),
      display_id: deviceIds(world.displayId, other.displayId),
      callbutton_id: deviceIds(world.buttonId, other.buttonId),
      chat_channel_id: fc.constantFrom('C-floor', 'chat-1'),
    },
    { requiredKeys: ['location_id', 'option_id'] },
  );
  const probes = fc
    .tuple(bearer(world), extraQuery, bodyCases(valid, createFields))
    .map(([headers, extra, body]) => withBody({ method: 'POST', url: `/api/callforhelp/requests?x=1${extra}`, headers }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 201, 401, 422);
  // The other organization's world is touched by no one here.
  const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE organization_id = $1', [other.organizationId]);
  assert.equal(count?.n, 0);
});

for (const [op, path, extraFields] of [
  ['C1 claimCfhRequest', 'claim', []],
  ['C2 markCfhOnTheWay', 'on_the_way', []],
  ['C3 completeCfhRequest', 'complete', ['customer_status']],
] as const) {
  test(`${op}: any body gives a 200 or a clean 4xx`, async () => {
    const world = await makeWorld(ctx.db, ctx.clock);
    const ids = await openCfhRequests(ctx.app, world, 4);
    const valid = staff(ids).chain((s) =>
      extraFields.length === 0 ? fc.constant(s) : fc.constantFrom('not_interested', 'helped').map((customer_status) => ({ ...s, customer_status })),
    );
    const probes = fc
      .tuple(bearer(world), extraQuery, bodyCases(valid, [...staffFields, ...extraFields]))
      .map(([headers, extra, body]) => withBody({ method: 'POST', url: `/api/callforhelp/${path}?x=1${extra}`, headers }, body));
    reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(80)), 200, 401, 422);
  });
}

test('C4 cancelCfhRequest: any body gives a 200 or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const ids = await openCfhRequests(ctx.app, world, 3);
  const completed = (await openCfhRequests(ctx.app, world, 1))[0] as string;
  const done = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/complete',
    headers: { authorization: `Bearer ${world.token}` },
    payload: { message_id: completed, channel_id: 'C', claimed_by: 'Ann', claimed_by_user_id: 'U', customer_status: 'helped' },
  });
  assert.equal(done.statusCode, 200, done.body);
  const valid = fc.record({
    message_id: fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...ids) },
      { weight: 2, arbitrary: fc.constant(completed) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
    ),
  });
  const probes = fc
    .tuple(bearer(world), extraQuery, bodyCases(valid, ['message_id']))
    .map(([headers, extra, body]) => withBody({ method: 'POST', url: `/api/callforhelp/cancel?x=1${extra}`, headers }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(80)), 200, 401, 422);
});

test('C5 getCfhRequest: any message_id and query give a 200 or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const ids = await openCfhRequests(ctx.app, world, 2);
  const messageId = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids) },
    { weight: 4, arbitrary: queryValue },
    { weight: 1, arbitrary: fc.constantFrom(...ids).map((id) => `${id}&message_id=${id}`) },
  );
  const probes = fc
    .tuple(bearer(world), messageId, extraQuery, fc.boolean())
    .map(([headers, id, extra, named]): Probe => ({ method: 'GET', url: `/api/callforhelp/v1/tracking?${named ? `message_id=${id}` : id}${extra}`, headers }));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(80)), 200, 401, 422);
});

test('unknown body fields are ignored by C1 and C4', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const [id] = await openCfhRequests(ctx.app, world, 1);
  const headers = { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' };
  const claim = withUnknownFields(
    staff([id as string]).map((s) => ({ ...s, message_id: id as string })),
    staffFields,
  );
  await fc.assert(
    fc.asyncProperty(claim, async (payload) => {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/claim', headers, payload });
      assert.equal(res.statusCode, 200, `${payload.slice(0, 300)} -> ${res.body.slice(0, 300)}`);
    }),
    { numRuns: runs(30) },
  );
  const cancel = withUnknownFields(fc.constant({ message_id: id as string }), ['message_id']);
  await fc.assert(
    fc.asyncProperty(cancel, async (payload) => {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/cancel', headers, payload });
      assert.equal(res.statusCode, 200, `${payload.slice(0, 300)} -> ${res.body.slice(0, 300)}`);
    }),
    { numRuns: runs(30) },
  );
});

test('every known poison at every field of every CFH body, and in the tracking query, is refused cleanly or applied', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const [id] = await openCfhRequests(ctx.app, world, 1);
  const headers = { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' };
  const person = { message_id: id, channel_id: 'C', claimed_by: 'Ann', claimed_by_user_id: 'U', request_from: 'provider_b' };
  const ops: { path: string; valid: Record<string, unknown>; fields: string[] }[] = [
    {
      path: 'requests',
      valid: { location_id: world.locationId, option_id: world.optionId, device_id: 1, display_id: 2, callbutton_id: 3, chat_channel_id: 'c' },
      fields: createFields,
    },
    { path: 'claim', valid: person, fields: staffFields },
    { path: 'on_the_way', valid: person, fields: staffFields },
    { path: 'cancel', valid: { message_id: id }, fields: ['message_id'] },
    { path: 'complete', valid: { ...person, customer_status: 'helped' }, fields: [...staffFields, 'customer_status'] },
  ];
  for (const op of ops) {
    await holdEach(
      ctx.app,
      ctx.db,
      [world],
      poisonBodies(op.valid, op.fields).map((payload) => ({ method: 'POST' as const, url: `/api/callforhelp/${op.path}`, headers, payload })),
    );
  }
  const queries = ['%00', 'a%00b', '%ED%A0%80', '%C0%80', '%FF', '%', `${id}%00`, encodeURIComponent('\uFFFD'), 'x'.repeat(65), '%F0%9D%95%8F'];
  await holdEach(
    ctx.app,
    ctx.db,
    [world],
    queries.map((q) => ({ method: 'GET' as const, url: `/api/callforhelp/v1/tracking?message_id=${q}`, headers })),
  );
});
