// Tenancy and credentials on the locker operations: the shared secret_token of L1-L6 and nothing
// else opens them; an order binds ids of one organization only; a locker's api-key changes that
// locker's cabinets and never another's.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { assertContractAnswer, describe, ownState, probeRefusesCleanly, runs, type Probe } from '../support/contract.ts';
import { placeOrder } from '../support/requests.ts';
import { makeWorld, TEST_SECRET, testApp, withSecret, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** L1-L6 of a world, with the query string given (the credential) in place of the secret. */
function secretOperations(w: World, openCode: string, query: string): Probe[] {
  const json = { 'content-type': 'application/json' };
  return [
    { method: 'GET', url: `/api/lockers/locations/${w.locationId}${query}` },
    {
      method: 'POST',
      url: `/api/lockers/orders${query}`,
      headers: json,
      payload: JSON.stringify({
        rearload: false,
        locker_id: w.lockerId,
        cabinet_id: w.cabinetIds[1],
        order_id: 1,
        organization_id: w.organizationId,
        location_id: w.locationId,
      }),
    },
    { method: 'PUT', url: `/api/lockers/cabinets/${w.cabinetIds[0]}${query}`, headers: json, payload: JSON.stringify({ command: 'open', reason: 'x' }) },
    { method: 'PUT', url: `/api/lockers/orders/cabinets/${w.cabinetIds[0]}${query}`, headers: json, payload: '{}' },
    { method: 'POST', url: `/api/lockers/cabinets/customers/${openCode}${query}`, headers: json, payload: JSON.stringify({ command: 'agree' }) },
    { method: 'PUT', url: `/api/lockers/orders/customer/${openCode}${query}`, headers: json, payload: '{}' },
  ];
}

test('L1-L6 refuse every credential but the secret_token with 401, and change nothing', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, w, 0, 42);
  const attempts: { query: string; headers: Record<string, string> }[] = [
    { query: '', headers: {} },
    { query: '', headers: { authorization: `Bearer ${w.token}` } },
    { query: '', headers: { 'api-key': w.lockerKey } },
    { query: `?secret_token=${encodeURIComponent(w.token)}`, headers: {} },
    { query: `?secret_token=${encodeURIComponent(w.lockerKey)}`, headers: {} },
    { query: `?secret_token=${encodeURIComponent(TEST_SECRET.toUpperCase())}`, headers: {} },
    { query: `?secret_token=${encodeURIComponent(TEST_SECRET.slice(0, -1))}`, headers: {} },
    { query: `?secret_token=${encodeURIComponent(` ${TEST_SECRET}`)}`, headers: {} },
    { query: `?token=${encodeURIComponent(TEST_SECRET)}`, headers: {} },
    { query: '', headers: { secret_token: TEST_SECRET, 'x-secret-token': TEST_SECRET } },
  ];
  for (const { query, headers } of attempts) {
    for (const probe of secretOperations(w, code, query)) {
      const withHeaders = { ...probe, headers: { ...probe.headers, ...headers } };
      const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], withHeaders);
      assert.equal(res.statusCode, 401, describe(withHeaders));
      assert.equal(res.json<{ code: string }>().code, 'unauthorized');
    }
  }
});

test("an order binds a cabinet only with its own locker, location and organization: another organization's ids are 422 and nothing is made", async () => {
  const a = await makeWorld(ctx.db, ctx.clock, { cabinets: 8 });
  const b = await makeWorld(ctx.db, ctx.clock, { cabinets: 8 });
  let cabinetIndex = 0;
  const which = fc.constantFrom('a', 'b');
  await fc.assert(
    fc.asyncProperty(fc.record({ cabinet: which, locker: which, location: which, organization: which }), async (pick) => {
      const of = (side: 'a' | 'b') => (side === 'a' ? a : b);
      const owner = of(pick.cabinet);
      const cabinetId = owner.cabinetIds[cabinetIndex % 8] as number;
      const probe: Probe = {
        method: 'POST',
        url: withSecret('/api/lockers/orders'),
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          rearload: false,
          cabinet_id: cabinetId,
          order_id: 7,
          locker_id: of(pick.locker).lockerId,
          location_id: of(pick.location).locationId,
          organization_id: of(pick.organization).organizationId,
        }),
      };
      const res = await probeRefusesCleanly(ctx.app, ctx.db, [a, b], probe);
      const together = pick.locker === pick.cabinet && pick.location === pick.cabinet && pick.organization === pick.cabinet;
      if (together) {
        assert.equal(res.statusCode, 201, describe(probe));
        assert.equal(res.json<{ organization_id: number }>().organization_id, owner.organizationId);
        cabinetIndex++; // that cabinet is taken now
      } else {
        assert.equal(res.statusCode, 422, `${describe(probe)} -> ${res.body}`);
      }
    }),
    { numRuns: runs(40) },
  );
});

test("a locker's api-key changes its own cabinets only: a report naming keys only another locker has is 422 and changes neither", async () => {
  const a = await makeWorld(ctx.db, ctx.clock, { cabinets: 4 });
  const b = await makeWorld(ctx.db, ctx.clock, { cabinets: 1 });
  const door = fc.constantFrom('open', 'closed');
  const report = fc.record({
    cabinets: fc.array(fc.record({ key: fc.integer({ min: 1, max: 4 }), front_status: door, rear_status: door }), { minLength: 1, maxLength: 4 }),
    locker_info: fc.record({ ip: fc.constantFrom('10.0.0.66'), firmware: fc.constantFrom('evil-1.0') }),
    event: fc.constant({ type: 'intrusion' }),
  });
  await fc.assert(
    fc.asyncProperty(report, async (body) => {
      const aBefore = await ownState(ctx.db, a);
      const probe: Probe = {
        method: 'POST',
        url: '/api/lockers/cabinet/status',
        headers: { 'api-key': b.lockerKey, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      };
      const res = await probeRefusesCleanly(ctx.app, ctx.db, [a, b], probe);
      assert.equal(await ownState(ctx.db, a), aBefore, `locker A is never changed by locker B's key: ${describe(probe)}`);
      const keys = new Set(body.cabinets.map((c) => c.key));
      const onlyOwn = [...keys].every((k) => k === 1) && keys.size === body.cabinets.length;
      assert.equal(res.statusCode, onlyOwn ? 200 : 422, `${describe(probe)} -> ${res.body}`);
    }),
    { numRuns: runs(40) },
  );
  const [lockerA] = await ctx.db.query<{ ip: string | null; firmware: string | null; last_seen_at: string | null }>(
    'SELECT ip, firmware, last_seen_at FROM lockers WHERE id = $1',
    [a.lockerId],
  );
  assert.deepEqual(lockerA, { ip: null, firmware: null, last_seen_at: null });
});

test("the api-key is the locker's alone: another locker's, an edge device's or a token is 401, a version 1 locker's is 422, and nothing changes", async () => {
  const a = await makeWorld(ctx.db, ctx.clock);
  const old = await makeWorld(ctx.db, ctx.clock, { lockerVersion: 1 });
  const body = JSON.stringify({ cabinets: [{ key: 1, front_status: 'open' }], locker_info: { ip: '10.9.9.9' }, event: { type: 'active' } });
  const cases: [Record<string, string>, number][] = [
    [{ 'api-key': a.edgeKey }, 401],
    [{ 'api-key': a.token }, 401],
    [{ authorization: `Bearer ${a.token}` }, 401],
    [{ 'api-key': `${a.lockerKey}x` }, 401],
    [{ 'api-key': a.lockerKey.toUpperCase() }, 401],
    [{ 'api-key': TEST_SECRET }, 401],
    [{ 'api-key': old.lockerKey }, 422],
  ];
  for (const [headers, status] of cases) {
    const probe: Probe = {
      method: 'POST',
      url: `/api/lockers/cabinet/status?secret_token=${TEST_SECRET}`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: body,
    };
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [a, old], probe);
    assert.equal(res.statusCode, status, describe(probe));
  }
});

test("a refused request answers the same whatever exists: an unknown open code and a completed order's code are both 404 on L5", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const code = await placeOrder(ctx.app, w, 0, 42);
  const done = await ctx.app.inject({ method: 'PUT', url: withSecret(`/api/lockers/orders/customer/${code}`) });
  assert.equal(done.statusCode, 200, done.body);
  const completed = await ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${code}`), payload: { command: 'agree' } });
  const unknown = await ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${'A'.repeat(32)}`), payload: { command: 'agree' } });
  assertContractAnswer(completed, 'L5 on a completed order');
  assert.equal(completed.statusCode, 404);
  assert.deepEqual(completed.json(), unknown.json());
});
