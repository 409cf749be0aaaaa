// Store devices (contract sections 17 and 18): enrolled from an admin's session in the browser that
// becomes the device, where people of its location then sign in with a badge or email and PIN (and
// nowhere else); the PIN throttle per person and device; a shift's 12 hours and "switch user"; revoking,
// which ends its shift sessions at their next request on every instance; who may do what.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { consoleWorld } from '../console/support.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';
import { addLocation, deviceSignIn, enroll, enrollRequest, setCookieOf, shift } from '../support/store-devices.ts';
import { otherInstanceDb, provisionToken, testApp, type Teardown, type TestContext } from '../support/world.ts';

const session = (ctx: TestContext, cookie: string) => ctx.app.inject({ method: 'GET', url: '/api/session', headers: { cookie } });
const queue = (ctx: TestContext, locationId: number, cookie: string) =>
  ctx.app.inject({ method: 'GET', url: `/console/api/locations/${locationId}/queue`, headers: { cookie } });

/** A store with Robin (staff with a PIN and a badge) and its org_admin signed in. */
async function robinsStore(t: Teardown) {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const robin = await makePerson(ctx.db, ctx.clock, w.organizationId, {
    name: 'Robin',
    role: 'staff',
    locationIds: [w.locationId],
    pin: '482913',
    badge: 'B-1001',
  });
  return { ctx, w, robin, admin: await signInHttp(ctx.app, w.admin) };
}

test('enrolled from an admin session, the browser keeps a device cookie (256 bits, stored hashed) and badge and PIN sign-in work there', async (t) => {
  const { ctx, w, robin, admin } = await robinsStore(t);
  const enrolled = await enroll(ctx.app, admin, w.locationId, '  Front desk tablet ');
  assert.match(enrolled.setCookie, /^storeops_device=[A-Za-z0-9_-]{43}; Max-Age=315360000; Path=\/; HttpOnly; SameSite=Lax$/);
  assert.deepEqual(
    { ...enrolled.device, id: 0, created_at: '' },
    {
      id: 0,
      organization_id: w.organizationId,
      location_id: w.locationId,
      name: 'Front desk tablet',
      enrolled_by: { id: w.admin.id, name: 'Sam' },
      created_at: '',
      last_seen_at: null,
      revoked_at: null,
    },
  );
  const value = enrolled.cookie.split('=')[1] as string;
  const [row] = await ctx.db.query<{ device_hash: string }>('SELECT device_hash FROM store_devices WHERE id = $1', [enrolled.device.id]);
  assert.equal(row?.device_hash, sha256hex(value), 'only the SHA-256 of the cookie is stored');

  // The enrolling session ended with it: no administrator stays signed in on a shared device.
  const jar = `${admin.cookie}; ${enrolled.cookie}`;
  const state = (await session(ctx, jar)).json();
  assert.equal(state.signed_in, false);
  assert.deepEqual(state.store_device, { id: enrolled.device.id, location_id: w.locationId });

  const byBadge = await shift(ctx.app, jar, { badge_code: 'B-1001' });
  const view = (await session(ctx, byBadge.cookie)).json();
  assert.equal(view.person.id, robin.id);
  assert.deepEqual(view.store_device, { id: enrolled.device.id, location_id: w.locationId });
  const byPin = await shift(ctx.app, jar, { email: robin.email.toUpperCase(), pin: '482913' });
  assert.equal((await session(ctx, byPin.cookie)).json().person.id, robin.id);
  const [seen] = await ctx.db.query<{ last_seen_at: string | null }>('SELECT last_seen_at FROM store_devices WHERE id = $1', [enrolled.device.id]);
  assert.ok(seen?.last_seen_at !== null);

  const entries = await ctx.db.query<{ action: string; actor_id: string; target_id: string; location_id: number }>(
    "SELECT action, actor_id, target_id, location_id FROM audit_entries WHERE organization_id = $1 AND action IN ('store_device.enrolled', 'sign_out') ORDER BY id",
    [w.organizationId],
  );
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor_id, e.location_id]),
    [
      ['store_device.enrolled', String(w.admin.id), w.locationId],
      ['sign_out', String(w.admin.id), w.locationId],
    ],
  );
  assert.ok(!JSON.stringify(await ctx.db.query('SELECT * FROM audit_entries WHERE organization_id = $1', [w.organizationId])).includes(value));
});

test('badge and PIN sign-in are refused (403) without the device cookie, with a made-up one, or on a revoked device', async (t) => {
  const { ctx, w, robin, admin } = await robinsStore(t);
  const enrolled = await enroll(ctx.app, admin, w.locationId);
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['admin']);
  const revoke = await ctx.app.inject({
    method: 'POST',
    url: `/api/admin/store_devices/${enrolled.device.id}/revoke`,
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(revoke.statusCode, 200, revoke.body);
  for (const cookie of [null, 'storeops_device=made-up-0123456789abcdefghijklmnopqrstuvwxyzABC', enrolled.cookie]) {
    for (const payload of [{ badge_code: 'B-1001' }, { email: robin.email, pin: '482913' }]) {
      const res = await deviceSignIn(ctx.app, cookie, payload);
      assert.equal(res.statusCode, 403, `${cookie} ${JSON.stringify(payload)}`);
      assert.equal(res.json().code, 'forbidden');
      assert.equal(setCookieOf(res, 'storeops_session'), undefined);
    }
  }
});

test("a person without a role at the device's location, a wrong badge or a wrong PIN: 401", async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const elsewhere = await addLocation(ctx, w.organizationId);
  const lee = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Lee', role: 'staff', locationIds: [elsewhere], pin: '112233', badge: 'B-2002' });
  const robin = await makePerson(ctx.db, ctx.clock, w.organizationId, {
    name: 'Robin',
    role: 'staff',
    locationIds: [w.locationId],
    pin: '482913',
    badge: 'B-1001',
  });
  const other = await consoleWorld(ctx.db, ctx.clock);
  await makePerson(ctx.db, ctx.clock, other.organizationId, { name: 'Kit', role: 'staff', locationIds: [other.locationId], badge: 'B-3003' });
  const enrolled = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId);
  const cases = [
    { badge_code: 'B-2002' },
    { email: lee.email, pin: '112233' },
    { badge_code: 'B-3003' },
    { badge_code: 'B-9999' },
    { email: robin.email, pin: '000000' },
  ];
  for (const payload of cases) {
    const res = await deviceSignIn(ctx.app, enrolled.cookie, payload);
    assert.equal(res.statusCode, 401, JSON.stringify(payload));
    assert.equal(res.json().code, 'unauthorized');
  }
  const failed = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_entries WHERE action = 'sign_in.failed' AND target_id = $1", [
    String(enrolled.device.id),
  ]);
  assert.equal(failed[0]?.n, cases.length, 'each refusal is an audit entry');
});

test('5 wrong PINs for one person on one device: 429 with Retry-After there for 15 minutes; that person elsewhere and others there still sign in', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const robin = await makePerson(ctx.db, clock, w.organizationId, { name: 'Robin', role: 'staff', locationIds: [w.locationId], pin: '482913' });
  const kim = await makePerson(ctx.db, clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId], pin: '135790' });
  const first = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId, 'Tablet 1');
  const second = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId, 'Tablet 2');
  for (let i = 0; i < 5; i++) {
    assert.equal((await deviceSignIn(ctx.app, first.cookie, { email: robin.email, pin: `00000${i}` })).statusCode, 401);
  }
  const refused = await deviceSignIn(ctx.app, first.cookie, { email: robin.email, pin: '482913' });
  assert.equal(refused.statusCode, 429, 'even the right PIN');
  assert.equal(refused.json().code, 'too_many_attempts');
  assert.equal(refused.headers['retry-after'], '900');
  await shift(ctx.app, second.cookie, { email: robin.email, pin: '482913' });
  await shift(ctx.app, first.cookie, { email: kim.email, pin: '135790' });
  clock.advance(15 * 60_000 + 1000);
  await shift(ctx.app, first.cookie, { email: robin.email, pin: '482913' });
});

test('a shift lasts 12 hours at most, however busy; "switch user" ends it and the device stays enrolled', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  await makePerson(ctx.db, clock, w.organizationId, { name: 'Robin', role: 'staff', locationIds: [w.locationId], badge: 'B-1001' });
  await makePerson(ctx.db, clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId], badge: 'B-1002' });
  const enrolled = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId);
  const robin = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-1001' });
  for (let hour = 1; hour < 12; hour++) {
    clock.advance(3600_000);
    assert.equal((await queue(ctx, w.locationId, robin.cookie)).statusCode, 200, `after ${hour} h`);
  }
  clock.advance(3600_000 + 1000);
  assert.equal((await queue(ctx, w.locationId, robin.cookie)).statusCode, 401, 'past 12 hours');

  const kim = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-1002' });
  const out = await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(kim) });
  assert.equal(out.statusCode, 200);
  assert.deepEqual(out.json().store_device, { id: enrolled.device.id, location_id: w.locationId }, 'still the enrolled device');
  assert.equal(setCookieOf(out, 'storeops_device'), undefined, 'the device cookie stays');
  assert.equal((await queue(ctx, w.locationId, kim.cookie)).statusCode, 401);
  await shift(ctx.app, enrolled.cookie, { badge_code: 'B-1001' });
});

test('on a store device a person works at its location only, whatever else they hold', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const second = await addLocation(ctx, w.organizationId);
  const boss = await makePerson(ctx.db, ctx.clock, w.organizationId, {
    name: 'Pat',
    role: 'staff',
    locationIds: [w.locationId],
    more: [{ role: 'location_admin', locationIds: [second] }],
    badge: 'B-4004',
  });
  const enrolled = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId);
  const pat = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-4004' });
  const view = (await session(ctx, pat.cookie)).json();
  assert.equal(view.person.id, boss.id);
  assert.deepEqual(view.memberships, [{ role: 'staff', organization_id: w.organizationId, location_ids: [w.locationId] }]);
  assert.equal((await queue(ctx, w.locationId, pat.cookie)).statusCode, 200);
  assert.equal((await queue(ctx, second, pat.cookie)).statusCode, 404);
  const audit = await ctx.app.inject({ method: 'GET', url: `/api/admin/audit?location_id=${second}`, headers: { cookie: pat.cookie } });
  assert.equal(audit.statusCode, 403, 'administering nothing on this device');
});

test('revoking ends the live shift sessions at their next request, on every instance; revoking again changes nothing', async (t) => {
  const ctx = await testApp({ t });
  const other = await testApp({ t, db: await otherInstanceDb(), clock: ctx.clock });
  const w = await consoleWorld(ctx.db, ctx.clock);
  await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Robin', role: 'staff', locationIds: [w.locationId], badge: 'B-1001' });
  await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId], badge: 'B-1002' });
  const enrolled = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId);
  const robin = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-1001' });
  const kim = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-1002' });
  assert.equal((await queue(other, w.locationId, kim.cookie)).statusCode, 200);
  const desk = await signInHttp(ctx.app, w.admin); // an admin elsewhere, not on the device
  const revoked = await ctx.app.inject({ method: 'POST', url: `/api/admin/store_devices/${enrolled.device.id}/revoke`, headers: fromPage(desk) });
  assert.equal(revoked.statusCode, 200, revoked.body);
  assert.ok(revoked.json().revoked_at !== null);
  assert.equal(setCookieOf(revoked, 'storeops_device'), undefined, 'not revoked from the device itself');
  assert.equal((await queue(ctx, w.locationId, robin.cookie)).statusCode, 401);
  assert.equal((await queue(other, w.locationId, kim.cookie)).statusCode, 401, 'on the other instance too');
  assert.equal((await session(ctx, enrolled.cookie)).json().store_device, null);
  assert.equal((await queue(ctx, w.locationId, desk.cookie)).statusCode, 200, "the admin's own session is not the device's");

  const entries = await ctx.db.query<{ action: string; target_name: string }>(
    "SELECT action, target_name FROM audit_entries WHERE organization_id = $1 AND action IN ('store_device.revoked', 'session.ended') ORDER BY id",
    [w.organizationId],
  );
  assert.deepEqual(
    entries.map((e) => [e.action, e.target_name]),
    [
      ['store_device.revoked', 'Front desk tablet'],
      ['session.ended', 'Robin'],
      ['session.ended', 'Kim'],
    ],
  );
  const again = await ctx.app.inject({ method: 'POST', url: `/api/admin/store_devices/${enrolled.device.id}/revoke`, headers: fromPage(desk) });
  assert.equal(again.statusCode, 200);
  assert.equal(again.json().revoked_at, revoked.json().revoked_at);
  const [n] = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_entries WHERE action = 'store_device.revoked' AND target_id = $1", [
    String(enrolled.device.id),
  ]);
  assert.equal(n?.n, 1, 'no second entry');
  // The browser can be enrolled again once its device is revoked.
  const admin = await signInHttp(ctx.app, w.admin);
  const reenrolled = await enrollRequest(ctx.app, admin, { location_id: w.locationId, name: 'Again' }, { cookie: `${admin.cookie}; ${enrolled.cookie}` });
  assert.equal(reenrolled.statusCode, 201, reenrolled.body);
});

test('revoked from the device itself, its cookie is removed too', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const lou = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [w.locationId], badge: 'B-5005' });
  const enrolled = await enroll(ctx.app, await signInHttp(ctx.app, w.admin), w.locationId);
  const onDevice = await shift(ctx.app, enrolled.cookie, { badge_code: 'B-5005' });
  assert.equal((await session(ctx, onDevice.cookie)).json().person.id, lou.id);
  const res = await ctx.app.inject({ method: 'POST', url: `/api/admin/store_devices/${enrolled.device.id}/revoke`, headers: fromPage(onDevice) });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(setCookieOf(res, 'storeops_device')), /^storeops_device=; Max-Age=0/);
});
