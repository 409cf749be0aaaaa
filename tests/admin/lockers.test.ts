// Section 18's lockers and their cabinets through HTTP: the api_key made by the service, shown once
// (create, rotate) and never in a list, a read or the audit log; a rotation refuses the old key at
// its next use (L7) and a retired locker is refused; cabinets replaced as a set (one with orders
// kept: 409 in_use); a locker with orders is kept; the file's lockers are the file's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshId, testApp, withSecret } from '../support/world.ts';
import { assertCode, assertField, assertNowhere, auditOf, bearer, call, ifMatch, refusedToOutsiders, sessionOf, setupWorld } from './support.ts';

const LOCKERS = '/api/admin/lockers';

/** L7 with a locker's api_key: a status report. */
const report = (app: Parameters<typeof call>[0], key: string) =>
  app.inject({ method: 'POST', url: '/api/lockers/cabinet/status', headers: { 'api-key': key }, payload: { cabinets: [] } });

test('an admin makes a locker with cabinets and its api_key (shown once), rotates the key (the old one refused at once) and retires it', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const body = { location_id: w.locationId, name: 'Side lockers', cabinets: [{ key: 1 }, { key: 2, size: 'large', thermal_mode: 'chill' }] };
  const made = await call(ctx.app, admin, 'POST', LOCKERS, body);
  assert.equal(made.statusCode, 201, made.body);
  const { id, api_key: key, cabinets, version, managed_by, rear_loading_available, timer, enabled } = made.json();
  assert.match(key, /^[A-Za-z0-9_-]{43}$/);
  assert.deepEqual([version, managed_by, rear_loading_available, timer, enabled], [1, 'admin', false, 30, true]);
  assert.deepEqual(
    (cabinets as { key: number; size: string; thermal_mode: string; enabled: boolean }[]).map((c) => [c.key, c.size, c.thermal_mode, c.enabled]),
    [
      [1, 'medium', 'ambient', true],
      [2, 'large', 'chill', true],
    ],
  );
  assert.notEqual((await report(ctx.app, key)).statusCode, 401);

  const rotated = await call(ctx.app, admin, 'POST', `${LOCKERS}/${id}/key?version=1`);
  assert.equal(rotated.statusCode, 200, rotated.body);
  const newKey = rotated.json().api_key as string;
  assert.equal((await report(ctx.app, key)).statusCode, 401);
  assert.notEqual((await report(ctx.app, newKey)).statusCode, 401);
  for (const secret of [key, newKey]) await assertNowhere(ctx.app, ctx.db, w, admin, secret, [LOCKERS, `${LOCKERS}/${id}`]);

  // Cabinets as a set: key 2 kept (by key) and resized, key 1 gone, key 3 new.
  const changed = await call(ctx.app, admin, 'PATCH', `${LOCKERS}/${id}`, { cabinets: [{ key: 2, size: 'small' }, { key: 3 }], timer: 45 }, ifMatch(2));
  assert.equal(changed.statusCode, 200, changed.body);
  assert.deepEqual(
    (changed.json().cabinets as { id: number; key: number; size: string }[]).map((c) => [c.key, c.size]),
    [
      [2, 'small'],
      [3, 'medium'],
    ],
  );
  assert.equal(changed.json().cabinets[0].id, cabinets[1].id);
  assertField(await call(ctx.app, admin, 'PATCH', `${LOCKERS}/${id}`, { cabinets: [{ key: 5 }, { key: 5 }] }, ifMatch(3)), 'cabinets[1].key');

  const off = await call(ctx.app, admin, 'PATCH', `${LOCKERS}/${id}`, { enabled: false }, ifMatch(3));
  assert.equal(off.json().enabled, false, off.body);
  assert.equal((await report(ctx.app, newKey)).statusCode, 401);
  const entries = await auditOf(ctx.db, w.organizationId, ['locker.created', 'locker.key_rotated', 'locker.updated', 'locker.disabled']);
  assert.deepEqual(
    entries.map((e) => e.action),
    ['locker.created', 'locker.key_rotated', 'locker.updated', 'locker.disabled'],
  );
  assert.deepEqual(entries[2]?.changes.timer, { from: 30, to: 45 });
  assert.equal((await call(ctx.app, admin, 'DELETE', `${LOCKERS}/${id}?version=4`)).statusCode, 204);
});

test('a locker or cabinet with orders is kept (409 in_use); the file’s locker is refused (409 managed_by_file); reach and refusals', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  assertCode(await call(ctx.app, token, 'PATCH', `${LOCKERS}/${w.lockerId}`, { name: 'x', version: 1 }), 409, 'managed_by_file');
  assertCode(await call(ctx.app, token, 'POST', `${LOCKERS}/${w.lockerId}/key?version=1`), 409, 'managed_by_file');
  const made = await call(ctx.app, token, 'POST', LOCKERS, { location_id: w.locationId, name: 'L', cabinets: [{ key: 1 }, { key: 2 }] });
  const { id, cabinets } = made.json() as { id: number; cabinets: { id: number }[] };
  const order = await ctx.app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    payload: { rearload: false, locker_id: id, cabinet_id: cabinets[0]?.id, order_id: freshId(), organization_id: w.organizationId, location_id: w.locationId },
  });
  assert.ok(order.statusCode < 300, order.body);
  assertCode(await call(ctx.app, token, 'PATCH', `${LOCKERS}/${id}`, { cabinets: [{ key: 2 }] }, ifMatch(1)), 409, 'in_use');
  assertCode(await call(ctx.app, token, 'DELETE', `${LOCKERS}/${id}?version=1`), 409, 'in_use');
  assertField(await call(ctx.app, token, 'POST', LOCKERS, { location_id: w.locationId, name: 'L', timer: -1 }), 'timer');
  assertField(await call(ctx.app, token, 'POST', LOCKERS, { location_id: w.locationId, name: 'L', version: 2 }), 'version');

  const lou = await sessionOf(ctx.app, w.locationAdmin);
  assert.equal((await call(ctx.app, lou, 'GET', `${LOCKERS}/${id}`)).statusCode, 200);
  assertCode(await call(ctx.app, lou, 'POST', LOCKERS, { location_id: w.locationB, name: 'B' }), 403, 'forbidden');
  assertCode(await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'GET', `${LOCKERS}/${id}`), 404, 'not_found');
  await refusedToOutsiders(ctx.app, w, (caller) => [
    call(ctx.app, caller, 'GET', LOCKERS),
    call(ctx.app, caller, 'POST', LOCKERS, { location_id: w.locationId, name: 'S' }),
    call(ctx.app, caller, 'POST', `${LOCKERS}/${id}/key?version=1`),
  ]);
});
