// Who may administer store devices (contract sections 17 and 18): the admins of the device's location
// enroll (from their session only: a token has no browser to become the device), list and revoke;
// staff are refused (403); a location or device out of reach is not found (404); a browser that
// already is a device is not enrolled twice (409); and a refusal changes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consoleWorld } from '../console/support.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';
import { addLocation, enroll, enrollRequest, setCookieOf } from '../support/store-devices.ts';
import { provisionToken, testApp } from '../support/world.ts';

test('who may enroll, list and revoke: admins of the location; a token cannot enroll (403); out of reach 404; staff 403; twice 409', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const second = await addLocation(ctx, w.organizationId);
  const other = await consoleWorld(ctx.db, ctx.clock);
  const lou = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [w.locationId] });
  const stan = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Stan', role: 'staff', locationIds: [w.locationId, second] });
  const mixed = await makePerson(ctx.db, ctx.clock, w.organizationId, {
    name: 'Max',
    role: 'location_admin',
    locationIds: [w.locationId],
    more: [{ role: 'staff', locationIds: [second] }],
  });
  const adminToken = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['admin']);
  const bearer = { authorization: `Bearer ${adminToken}` };

  const byToken = await ctx.app.inject({ method: 'POST', url: '/api/admin/store_devices', headers: bearer, payload: { location_id: w.locationId, name: 'T' } });
  assert.equal(byToken.statusCode, 403);
  assert.equal(byToken.json().code, 'forbidden');
  const expect = async (who: typeof lou, locationId: number, status: number, code: string) => {
    const res = await enrollRequest(ctx.app, await signInHttp(ctx.app, who), { location_id: locationId, name: 'Tablet' });
    assert.equal(res.statusCode, status, `${who.name} at ${locationId}: ${res.body}`);
    assert.equal(res.json().code, code);
    assert.equal(setCookieOf(res, 'storeops_device'), undefined);
  };
  await expect(stan, w.locationId, 403, 'forbidden');
  await expect(mixed, second, 403, 'forbidden');
  await expect(lou, second, 404, 'not_found');
  await expect(lou, other.locationId, 404, 'not_found');
  await expect(lou, 999_999_999, 404, 'not_found');
  const louSession = await signInHttp(ctx.app, lou);
  const noCsrf = await ctx.app.inject({
    method: 'POST',
    url: '/api/admin/store_devices',
    headers: { cookie: louSession.cookie },
    payload: { location_id: w.locationId, name: 'T' },
  });
  assert.equal(noCsrf.statusCode, 403);
  assert.equal(noCsrf.json().code, 'csrf_failed');
  const blank = await enrollRequest(ctx.app, louSession, { location_id: w.locationId, name: '   ' });
  assert.equal(blank.statusCode, 422);
  assert.deepEqual(Object.keys(blank.json().errors), ['name']);
  assert.equal((await ctx.db.query('SELECT 1 FROM store_devices WHERE organization_id = $1', [w.organizationId])).length, 0, 'nothing enrolled');

  const mine = await enroll(ctx.app, louSession, w.locationId, 'Lou tablet');
  const lou2 = await signInHttp(ctx.app, lou);
  const again = await enrollRequest(ctx.app, lou2, { location_id: w.locationId, name: 'Again' }, { cookie: `${lou2.cookie}; ${mine.cookie}` });
  assert.equal(again.statusCode, 409, again.body);
  assert.equal(again.json().code, 'already_enrolled');
  const theirs = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), second, 'Second store tablet');

  const list = async (headers: Record<string, string>, query = '') => ctx.app.inject({ method: 'GET', url: `/api/admin/store_devices${query}`, headers });
  const names = (res: { json: () => { name: string }[] }) => res.json().map((d) => d.name);
  assert.deepEqual(names(await list({ cookie: (await signInHttp(ctx.app, lou)).cookie })), ['Lou tablet']);
  assert.deepEqual(names(await list({ cookie: (await signInHttp(ctx.app, mixed)).cookie })), ['Lou tablet']);
  assert.deepEqual(names(await list(bearer)), ['Lou tablet', 'Second store tablet']);
  assert.deepEqual(names(await list(bearer, `?location_id=${second}`)), ['Second store tablet']);
  assert.equal((await list({ cookie: (await signInHttp(ctx.app, stan)).cookie })).statusCode, 403);
  assert.equal((await list({ cookie: (await signInHttp(ctx.app, mixed)).cookie }, `?location_id=${second}`)).statusCode, 403);
  assert.equal((await list({ cookie: (await signInHttp(ctx.app, lou)).cookie }, `?location_id=${other.locationId}`)).statusCode, 404);
  assert.equal((await list({ authorization: `Bearer ${await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'])}` })).statusCode, 403);
  assert.equal((await list({})).statusCode, 401);

  const revoke = async (headers: Record<string, string>, id: number) =>
    ctx.app.inject({ method: 'POST', url: `/api/admin/store_devices/${id}/revoke`, headers });
  assert.equal((await revoke(fromPage(await signInHttp(ctx.app, lou)), theirs.device.id)).statusCode, 404, 'out of reach');
  assert.equal((await revoke(fromPage(await signInHttp(ctx.app, mixed)), theirs.device.id)).statusCode, 403, 'seen, not administered');
  assert.equal((await revoke(fromPage(await signInHttp(ctx.app, stan)), mine.device.id)).statusCode, 403);
  assert.equal((await revoke({ authorization: `Bearer ${other.token}` }, mine.device.id)).statusCode, 403, 'no admin scope');
  const otherAdmin = await provisionToken(ctx.db, ctx.clock, other.organizationId, ['admin']);
  assert.equal((await revoke({ authorization: `Bearer ${otherAdmin}` }, mine.device.id)).statusCode, 404, "another organization's");
  assert.equal((await revoke(bearer, 999_999_999)).statusCode, 404);
  const [still] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM store_devices WHERE organization_id = $1 AND revoked_at IS NULL', [
    w.organizationId,
  ]);
  assert.equal(still?.n, 2, 'nothing revoked by the refusals');
  assert.equal((await revoke(bearer, theirs.device.id)).statusCode, 200);
});
