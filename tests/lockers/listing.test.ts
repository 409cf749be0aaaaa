import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { makeAjv } from '../../src/http/validation.ts';
import { Locker } from '../../src/lockers/schemas.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, withSecret } from '../support/world.ts';
import { assertError, assertInvalid, CABINET_RECORD_FIELDS, lockers, sharedApp, WIRE_TIME, type Json } from './helpers.ts';

await sharedApp();

const LOCKER_FIELDS = [
  'id',
  'api_key',
  'created_at',
  'updated_at',
  'name',
  'organization_id',
  'location_id',
  'rear_loading_available',
  'version',
  'timer',
  'cabinets',
];
const CABINET_FIELDS = [...CABINET_RECORD_FIELDS, 'cool_off_period'];

test('the location listing shows each locker with its cabinets, flags typed as L1 says', async () => {
  const { ctx, world } = await lockers({ cabinets: 2 });
  const res = await ctx.app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${world.locationId}`) });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const listing = res.json<Json[]>();
  // The database builds this body, so hold it to the documented response schema here.
  const matchesSchema = makeAjv({ coerceTypes: false }).compile(Type.Array(Locker));
  assert.ok(matchesSchema(listing), JSON.stringify(matchesSchema.errors));
  assert.equal(listing.length, 1);
  const locker = listing[0] as Json;
  assert.deepEqual(Object.keys(locker).sort(), [...LOCKER_FIELDS].sort());
  assert.equal(locker.id, world.lockerId);
  assert.equal(locker.api_key, world.lockerKey);
  assert.equal(locker.organization_id, world.organizationId);
  assert.equal(locker.location_id, world.locationId);
  assert.equal(locker.rear_loading_available, true);
  assert.equal(locker.version, 2);
  assert.equal(locker.timer, 30);
  assert.match(locker.created_at as string, WIRE_TIME);
  assert.match(locker.updated_at as string, WIRE_TIME);
  const cabinets = locker.cabinets as Json[];
  assert.deepEqual(
    cabinets.map((c) => c.id),
    world.cabinetIds,
  );
  for (const [i, c] of cabinets.entries()) {
    assert.deepEqual(Object.keys(c).sort(), [...CABINET_FIELDS].sort());
    assert.equal(c.key, i + 1);
    assert.equal(c.locker_id, world.lockerId);
    assert.equal(c.enabled, true, 'enabled is a boolean in L1');
    assert.equal(c.occupied, 0, 'occupied is 1/0 in L1');
    assert.equal(c.cool_off_period, false, 'cool_off_period is a boolean');
    assert.equal(c.state, 'closed');
    assert.equal(c.rear_load_status, 'closed');
    assert.equal(c.thermal_mode, 'ambient');
    assert.equal(c.size, 'medium');
    assert.equal(c.released_at, null);
    assert.match(c.created_at as string, WIRE_TIME);
    assert.match(c.updated_at as string, WIRE_TIME);
  }
});

test('lockers are listed by id and their cabinets by key', async () => {
  const l = await lockers({ cabinets: 1 });
  const secondLocker = l.world.lockerId + 500_000;
  const cabinetIds = [freshId(), freshId(), freshId()];
  await applyProvisioning(l.ctx.db, l.ctx.clock, {
    lockers: [
      {
        id: secondLocker,
        location_id: l.world.locationId,
        name: 'Back lockers',
        version: 1,
        api_key: `key-${secondLocker}-0123456789-abcdefghijklm`,
        cabinets: [
          { id: cabinetIds[0] as number, key: 3 },
          { id: cabinetIds[1] as number, key: 1 },
          { id: cabinetIds[2] as number, key: 2 },
        ],
      },
    ],
  });
  const res = await l.ctx.app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${l.world.locationId}`) });
  const listing = res.json<{ id: number; version: number; rear_loading_available: boolean; cabinets: { key: number; locker_id: number }[] }[]>();
  assert.deepEqual(
    listing.map((k) => k.id),
    [l.world.lockerId, secondLocker],
  );
  assert.deepEqual(
    listing[1]?.cabinets.map((c) => c.key),
    [1, 2, 3],
  );
  assert.ok(listing[1]?.cabinets.every((c) => c.locker_id === secondLocker));
  assert.equal(listing[1]?.version, 1);
  assert.equal(listing[1]?.rear_loading_available, false);
});

test('a cabinet with an open order is listed as occupied 1', async () => {
  const l = await lockers();
  await l.placeOrder(1);
  assert.equal((await l.cabinet(1)).occupied, 1);
  assert.equal((await l.cabinet(0)).occupied, 0);
});

test('a location without lockers is an empty list; an unknown location is 404', async () => {
  const ctx = await sharedApp();
  const organizationId = freshId();
  const locationId = freshId();
  await applyProvisioning(ctx.db, ctx.clock, {
    organizations: [{ id: organizationId, name: 'Empty org' }],
    locations: [{ id: locationId, organization_id: organizationId, name: 'No lockers here' }],
  });
  const empty = await ctx.app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${locationId}`) });
  assert.equal(empty.statusCode, 200);
  assert.deepEqual(empty.json(), []);
  assertError(await ctx.app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${freshId()}`) }), 404, 'not_found');
  assertInvalid(await ctx.app.inject({ method: 'GET', url: withSecret('/api/lockers/locations/abc') }), 'location_id');
  assertInvalid(await ctx.app.inject({ method: 'GET', url: withSecret('/api/lockers/locations/99999999999') }), 'location_id');
});

test('every secret_token operation refuses a missing or wrong token with 401', async () => {
  const l = await lockers();
  const calls = [
    { method: 'GET', path: `/api/lockers/locations/${l.world.locationId}` },
    { method: 'POST', path: '/api/lockers/orders', payload: {} },
    { method: 'PUT', path: `/api/lockers/cabinets/${l.world.cabinetIds[0]}`, payload: { command: 'open' } },
    { method: 'PUT', path: `/api/lockers/orders/cabinets/${l.world.cabinetIds[0]}`, payload: {} },
    { method: 'POST', path: '/api/lockers/cabinets/customers/abc', payload: { command: 'here' } },
    { method: 'PUT', path: '/api/lockers/orders/customer/abc', payload: {} },
  ] as const;
  for (const call of calls) {
    for (const url of [call.path, `${call.path}?secret_token=wrong-secret-value`, `${call.path}?secret_token=`]) {
      const res = await l.ctx.app.inject({ method: call.method, url, ...('payload' in call ? { payload: call.payload } : {}) });
      assertError(res, 401, 'unauthorized');
    }
  }
  // Nothing of a refused command happened.
  assert.equal((await l.cabinet(0)).state, 'closed');
});

test('the listing is compact JSON, without line breaks between lockers or cabinets, keys in L1 order', async () => {
  const { ctx, world } = await lockers({ cabinets: 3 });
  const res = await ctx.app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${world.locationId}`) });
  assert.equal(res.statusCode, 200);
  assert.ok(!res.body.includes('\n'), res.body.slice(0, 200));
  assert.equal(res.body, JSON.stringify(JSON.parse(res.body)), 'exactly as JSON.stringify would write it');
  assert.deepEqual(Object.keys(res.json<Json[]>()[0] as Json), LOCKER_FIELDS);
});
