// Property-based hostile input on the locker operations (L1-L7): malformed bodies, path and query
// values, content types. Never a 5xx, errors in the contract's shape, and a refused request
// changes nothing stored.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { bodyCases, extraQuery, hostileString, pathSegment, poisonBodies, queryValue, withBody, withUnknownFields } from '../support/arbitraries.ts';
import { holdEach, holdProperty, reached, runs, type Probe } from '../support/contract.ts';
import { placeOrder } from '../support/requests.ts';
import { makeWorld, TEST_SECRET, testApp, withSecret, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** A well-formed id and open code that no row has: the 404 of the business path. */
const NO_ROW = '999';
const NO_CODE = 'A'.repeat(32);

/** The secret_token query: right in most runs (so validation and the business rules are reached). */
const secretQuery: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(`secret_token=${encodeURIComponent(TEST_SECRET)}`) },
  { weight: 1, arbitrary: queryValue.map((v) => `secret_token=${v}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'secret_token',
      `SECRET_TOKEN=${TEST_SECRET}`,
      `secret_token=${TEST_SECRET}&secret_token=${TEST_SECRET}`,
      `secret_token[]=${TEST_SECRET}`,
      `secret_token=${TEST_SECRET}%00`,
    ),
  },
);

/** The api-key header of L7: the locker's own key in most runs. */
const apiKeyHeader = (world: World): fc.Arbitrary<Record<string, string | string[]>> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant({ 'api-key': world.lockerKey }) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 10_000).map((s) => ({ 'api-key': s })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string | string[]>>(
        {},
        { 'api-key': [world.lockerKey, 'x'] },
        { 'API-KEY': `${world.lockerKey} ` },
        { authorization: `Bearer ${world.token}` },
      ),
    },
  );

test('L1 getLocationLockers: any location_id and query give a 2xx or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const probes = fc
    .tuple(pathSegment([String(world.locationId), NO_ROW]), secretQuery, extraQuery)
    .map(([id, secret, extra]): Probe => ({ method: 'GET', url: `/api/lockers/locations/${id}?${secret}${extra}` }));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(80)), 200, 401, 422);
});

const orderFields = ['rearload', 'locker_id', 'cabinet_id', 'order_id', 'organization_id', 'location_id'];

test('L2 createLockerOrder: malformed bodies never make an order, valid ones make at most one per cabinet', async () => {
  const world = await makeWorld(ctx.db, ctx.clock, { cabinets: 4 });
  const valid = fc.record({
    rearload: fc.boolean(),
    locker_id: fc.constant(world.lockerId),
    cabinet_id: fc.constantFrom(...world.cabinetIds),
    order_id: fc.integer({ min: 1, max: 5 }),
    organization_id: fc.constant(world.organizationId),
    location_id: fc.constant(world.locationId),
  });
  const probes = fc
    .tuple(secretQuery, extraQuery, bodyCases(valid, orderFields))
    .map(([secret, extra, body]) => withBody({ method: 'POST', url: `/api/lockers/orders?${secret}${extra}` }, body));
  // A valid order runs first: the draws make one only about seven times in a hundred.
  const made = {
    rearload: false,
    locker_id: world.lockerId,
    cabinet_id: world.cabinetIds[0],
    order_id: 1,
    organization_id: world.organizationId,
    location_id: world.locationId,
  };
  const example: Probe = {
    method: 'POST',
    url: `/api/lockers/orders?secret_token=${encodeURIComponent(TEST_SECRET)}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(made),
  };
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100), [example]), 201, 401, 422);
  const [open] = await ctx.db.query<{ n: number; cabinets: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT cabinet_id)::int AS cabinets FROM locker_orders WHERE locker_id = $1 AND completed_at IS NULL',
    [world.lockerId],
  );
  assert.equal(open?.n, open?.cabinets, 'at most one open order per cabinet');
});

const commandFields = ['command', 'acted_by', 'size', 'thermal_mode', 'order_id', 'reason', 'rearload', 'delay'];
const commandBody = fc.record(
  {
    command: fc.constantFrom('resize', 'set_thermal_mode', 'disable', 'enable', 'open', 'close'),
    acted_by: fc.integer({ min: 0, max: 1000 }),
    size: fc.constantFrom('small', 'medium', 'large'),
    thermal_mode: fc.constantFrom('ambient', 'heat', 'freeze', 'chill'),
    reason: fc.constantFrom('staff check', 'customer asked'),
    rearload: fc.boolean(),
    delay: fc.integer({ min: 0, max: 600 }),
  },
  { requiredKeys: ['command'] },
);

test('L3 commandCabinet: any cabinet_id and body give a 2xx or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock, { rearLoading: false });
  await placeOrder(ctx.app, world, 0, 77);
  const probes = fc
    .tuple(pathSegment([...world.cabinetIds.map(String), NO_ROW]), secretQuery, extraQuery, bodyCases(commandBody, commandFields))
    .map(([id, secret, extra, body]) => withBody({ method: 'PUT', url: `/api/lockers/cabinets/${id}?${secret}${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 200, 401, 422);
});

const completeFields = ['completed_by', 'completed_device_id', 'delay'];
const completeBody = fc.record(
  {
    completed_by: fc.integer({ min: 0, max: 1000 }),
    completed_device_id: fc.integer({ min: 0, max: 1000 }),
    delay: fc.integer({ min: 0, max: 600 }),
  },
  { requiredKeys: [] },
);

test('L4 completeCabinetOrder: any cabinet_id and body give a 2xx or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock, { cabinets: 4 });
  for (let i = 0; i < 4; i++) await placeOrder(ctx.app, world, i, 100 + i);
  const probes = fc
    .tuple(pathSegment([...world.cabinetIds.map(String), NO_ROW]), secretQuery, extraQuery, bodyCases(completeBody, completeFields))
    .map(([id, secret, extra, body]) => withBody({ method: 'PUT', url: `/api/lockers/orders/cabinets/${id}?${secret}${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 200, 401, 422);
});

test('L5 commandByOpenCode: any open code and body give a 2xx or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const codes = [await placeOrder(ctx.app, world, 0, 1), await placeOrder(ctx.app, world, 1, 2)];
  const valid = fc.record({ command: fc.constantFrom('here', 'agree', 'disagree') });
  const probes = fc
    .tuple(pathSegment([...codes, NO_CODE]), secretQuery, extraQuery, bodyCases(valid, ['command']))
    .map(([code, secret, extra, body]) => withBody({ method: 'POST', url: `/api/lockers/cabinets/customers/${code}?${secret}${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 200, 401, 422);
});

test('L6 completeOrderByOpenCode: any open code and body give a 2xx or a clean 4xx', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const codes = [await placeOrder(ctx.app, world, 0, 1), await placeOrder(ctx.app, world, 1, 2), await placeOrder(ctx.app, world, 2, 3)];
  const probes = fc
    .tuple(pathSegment([...codes, NO_CODE]), secretQuery, extraQuery, bodyCases(completeBody, completeFields))
    .map(([code, secret, extra, body]) => withBody({ method: 'PUT', url: `/api/lockers/orders/customer/${code}?${secret}${extra}` }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 200, 401, 422);
});

const statusFields = [
  'cabinets',
  'cabinets.0',
  'cabinets.0.key',
  'cabinets.0.front_status',
  'cabinets.0.rear_status',
  'cabinets.1.key',
  'locker_info',
  'locker_info.ip',
  'locker_info.firmware',
  'event',
  'event.type',
  'event.detail',
  'event.detail.0',
];

test('L7 updateLockerStatus: any report and api-key give a 2xx or a clean 4xx, and an unknown key applies nothing', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const door = fc.constantFrom('open', 'closed');
  const valid = fc.record(
    {
      cabinets: fc.array(fc.record({ key: fc.integer({ min: 1, max: 4 }), front_status: door, rear_status: door }, { requiredKeys: ['key'] }), {
        maxLength: 3,
      }),
      locker_info: fc.record({ ip: fc.ipV4(), firmware: fc.constantFrom('2.1.0', '2.2.0-rc1') }, { requiredKeys: [] }),
      event: fc.record({ type: fc.constantFrom('active', 'door'), detail: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['type'] }),
    },
    { requiredKeys: ['cabinets'] },
  );
  const probes = fc
    .tuple(apiKeyHeader(world), extraQuery, bodyCases(valid, statusFields))
    .map(([headers, extra, body]) => withBody({ method: 'POST', url: `/api/lockers/cabinet/status?x=1${extra}`, headers }, body));
  reached(await holdProperty(ctx.app, ctx.db, [world], probes, runs(100)), 200, 401, 422);
});

test('unknown body fields are ignored by L3 and L7', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const l3 = withUnknownFields(fc.record({ command: fc.constantFrom('enable', 'close') }), commandFields);
  await fc.assert(
    fc.asyncProperty(l3, async (payload) => {
      const res = await ctx.app.inject({
        method: 'PUT',
        url: withSecret(`/api/lockers/cabinets/${world.cabinetIds[0]}`),
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 200, `${payload.slice(0, 300)} -> ${res.body.slice(0, 300)}`);
    }),
    { numRuns: runs(40) },
  );
  const l7 = withUnknownFields(fc.constant({ cabinets: [{ key: 1, front_status: 'closed' }] }), ['cabinets', 'locker_info', 'event']);
  await fc.assert(
    fc.asyncProperty(l7, async (payload) => {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/lockers/cabinet/status',
        headers: { 'content-type': 'application/json', 'api-key': world.lockerKey },
        payload,
      });
      assert.equal(res.statusCode, 200, `${payload.slice(0, 300)} -> ${res.body.slice(0, 300)}`);
    }),
    { numRuns: runs(40) },
  );
});

test('every known poison at every field of every locker body is refused cleanly or applied', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, world, 0, 9);
  const json = { 'content-type': 'application/json' };
  const ops: { method: Probe['method']; url: string; headers: Record<string, string>; valid: Record<string, unknown>; fields: string[] }[] = [
    {
      method: 'POST',
      url: withSecret('/api/lockers/orders'),
      headers: json,
      fields: orderFields,
      valid: {
        rearload: false,
        locker_id: world.lockerId,
        cabinet_id: world.cabinetIds[1],
        order_id: 1,
        organization_id: world.organizationId,
        location_id: world.locationId,
      },
    },
    {
      method: 'PUT',
      url: withSecret(`/api/lockers/cabinets/${world.cabinetIds[2]}`),
      headers: json,
      fields: commandFields,
      valid: { command: 'resize', size: 'large', reason: 'r', order_id: '1', acted_by: 1, delay: 5 },
    },
    { method: 'PUT', url: withSecret(`/api/lockers/orders/cabinets/${world.cabinetIds[2]}`), headers: json, fields: completeFields, valid: { delay: 1 } },
    { method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${code}`), headers: json, fields: ['command'], valid: { command: 'here' } },
    {
      method: 'PUT',
      url: withSecret('/api/lockers/orders/customer/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      headers: json,
      fields: completeFields,
      valid: { delay: 1 },
    },
    {
      method: 'POST',
      url: '/api/lockers/cabinet/status',
      headers: { ...json, 'api-key': world.lockerKey },
      fields: statusFields,
      valid: {
        cabinets: [{ key: 1, front_status: 'open', rear_status: 'closed' }],
        locker_info: { ip: '10.0.0.1', firmware: '2.1' },
        event: { type: 'active', detail: { door: 1 } },
      },
    },
  ];
  for (const op of ops) {
    await holdEach(
      ctx.app,
      ctx.db,
      [world],
      poisonBodies(op.valid, op.fields).map((payload) => ({ method: op.method, url: op.url, headers: op.headers, payload })),
    );
  }
});
