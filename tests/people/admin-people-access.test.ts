// Section 18's people through HTTP, who may do what: staff, a token without the admin scope, signed
// out, another organization, a location admin and an admin token limited to store A, an unlimited
// admin token, the file's people, CSRF, and malformed input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshId, testApp } from '../support/world.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';
import { adminManaged, adminWorld, auditOf, bearer, call, sessionOf, type Caller } from './admin-support.ts';

const email = (name: string) => `${name}.${Math.random().toString(36).slice(2, 10)}@example.com`;

test('who may do what: staff, a token without the admin scope, signed out, and another organization', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const target = w.staff.id;
  const ops = (caller: Caller) => [
    call(ctx.app, caller, 'GET', '/api/admin/people'),
    call(ctx.app, caller, 'GET', `/api/admin/people/${target}`),
    call(ctx.app, caller, 'POST', '/api/admin/people', { email: email('x'), name: 'X', memberships: [{ role: 'staff', location_ids: [w.locationId] }] }),
    call(ctx.app, caller, 'PATCH', `/api/admin/people/${target}`, { name: 'Y', version: 1 }),
    call(ctx.app, caller, 'POST', `/api/admin/people/${target}/sessions/end`),
  ];
  const expect = async (caller: Caller, status: number, code: string) => {
    for (const res of await Promise.all(ops(caller))) {
      assert.equal(res.statusCode, status, `${res.body}`);
      assert.equal(res.json().code, code);
    }
  };
  await expect(await sessionOf(ctx.app, w.staff), 403, 'forbidden');
  await expect(bearer(w.cfhToken), 403, 'insufficient_scope');
  await expect('nobody', 401, 'unauthorized');
  await expect(bearer('not-a-token-0123456789'), 401, 'unauthorized');

  // Another organization's administrator and token find none of our people.
  const stranger = await sessionOf(ctx.app, w.other.admin);
  for (const url of [`/api/admin/people/${target}`, `/api/admin/people/${w.admin.id}`]) {
    assert.equal((await call(ctx.app, stranger, 'GET', url)).statusCode, 404);
    assert.equal((await call(ctx.app, stranger, 'PATCH', url, { name: 'Z', version: 1 })).statusCode, 404);
    assert.equal((await call(ctx.app, stranger, 'POST', `${url}/sessions/end`)).statusCode, 404);
  }
  const theirs = (await call(ctx.app, stranger, 'GET', '/api/admin/people')).json() as { id: number }[];
  assert.deepEqual(
    theirs.map((p) => p.id),
    [w.other.admin.id],
  );
  const outside = await call(ctx.app, stranger, 'POST', '/api/admin/people', {
    email: email('o'),
    name: 'O',
    memberships: [{ role: 'staff', location_ids: [w.locationId] }],
  });
  assert.equal(outside.statusCode, 422);
  assert.deepEqual(outside.json().errors, { 'memberships[0].location_ids': [`location ${w.locationId} not found`] });
  assert.equal((await auditOf(ctx.db, w.organizationId, ['person.created', 'person.updated', 'person.sessions_ended'])).length, 0);
});

test('a location admin, and an admin token limited to store A: people of A only, staff and location_admin at A only, never an org_admin changed', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const atB = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Bea', role: 'staff', locationIds: [w.locationB] });
  const both = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Bo', role: 'staff', locationIds: [w.locationId, w.locationB] });
  for (const id of [atB.id, both.id, w.admin.id]) await adminManaged(ctx.db, id);
  for (const caller of [await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)]) {
    const seen = ((await call(ctx.app, caller, 'GET', '/api/admin/people')).json() as { id: number }[]).map((p) => p.id);
    assert.ok(seen.includes(w.staff.id) && seen.includes(both.id) && seen.includes(w.admin.id), 'A and the org admins');
    assert.ok(!seen.includes(atB.id), 'not the people of B only');
    assert.ok(!seen.includes(w.other.admin.id));
    assert.equal((await call(ctx.app, caller, 'GET', `/api/admin/people/${atB.id}`)).statusCode, 404);
    assert.equal((await call(ctx.app, caller, 'PATCH', `/api/admin/people/${atB.id}`, { name: 'X', version: 2 })).statusCode, 404);
    assert.equal((await call(ctx.app, caller, 'GET', `/api/admin/people?location_id=${w.locationB}`)).statusCode, 404);

    const grant = (memberships: unknown[]) => call(ctx.app, caller, 'POST', '/api/admin/people', { email: email('n'), name: 'New', memberships });
    for (const memberships of [
      [{ role: 'org_admin' }],
      [{ role: 'staff', location_ids: [w.locationB] }],
      [{ role: 'location_admin', location_ids: [w.locationId, w.locationB] }],
    ]) {
      const res = await grant(memberships);
      assert.equal(res.statusCode, 403, JSON.stringify(memberships));
      assert.equal(res.json().code, 'forbidden');
    }
    const made = await grant([{ role: 'location_admin', location_ids: [w.locationId] }]);
    assert.equal(made.statusCode, 201, made.body);

    const version = async (id: number) => (await call(ctx.app, caller, 'GET', `/api/admin/people/${id}`)).json().version as number;
    const orgAdmin = await call(ctx.app, caller, 'PATCH', `/api/admin/people/${w.admin.id}`, { memberships: [], version: await version(w.admin.id) });
    assert.equal(orgAdmin.statusCode, 403, 'an org_admin is not changed by a location admin');
    const whole = await call(ctx.app, caller, 'PATCH', `/api/admin/people/${both.id}`, { status: 'disabled', version: await version(both.id) });
    assert.equal(whole.statusCode, 403, 'a person who also works at B is not disabled from A');
    assert.equal((await call(ctx.app, caller, 'POST', `/api/admin/people/${both.id}/sessions/end`)).statusCode, 403);
  }
  // Their memberships at A are theirs to replace; B's stay.
  const lou = await sessionOf(ctx.app, w.locationAdmin);
  const v = (await call(ctx.app, lou, 'GET', `/api/admin/people/${both.id}`)).json().version;
  const res = await call(ctx.app, lou, 'PATCH', `/api/admin/people/${both.id}`, {
    memberships: [{ role: 'location_admin', location_ids: [w.locationId] }],
    version: v,
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().memberships, [
    { role: 'location_admin', location_ids: [w.locationId], granted_by: 'admin' },
    { role: 'staff', location_ids: [w.locationB], granted_by: 'admin' },
  ]);
  const [entry] = await auditOf(ctx.db, w.organizationId, ['person.created']);
  assert.equal(entry?.actor_type, 'person');
  const byToken = (await auditOf(ctx.db, w.organizationId, ['person.created']))[1];
  assert.equal(byToken?.actor_type, 'service_account', 'a token acts as its service account');
});

test('an unlimited admin token administers the whole organization, and is recorded as its service account', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const res = await call(ctx.app, bearer(w.adminToken), 'POST', '/api/admin/people', { email: email('o'), name: 'Org', memberships: [{ role: 'org_admin' }] });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json().memberships, [{ role: 'org_admin', location_ids: null, granted_by: 'admin' }]);
  assert.equal(res.json().one_time_password, undefined, 'no password unless asked');
  const [entry] = await auditOf(ctx.db, w.organizationId, ['person.created']);
  assert.equal(entry?.actor_type, 'service_account');
  const list = (await call(ctx.app, bearer(w.adminToken), 'GET', `/api/admin/people?location_id=${w.locationB}`)).json() as { id: number }[];
  assert.deepEqual(list.map((p) => p.id).sort(), [w.admin.id, res.json().id].sort(), 'at B: the org admins only');
});

test('a person the provisioning file manages is 409 managed_by_file, and nothing changes', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const before = (await call(ctx.app, admin, 'GET', `/api/admin/people/${w.staff.id}`)).json();
  assert.equal(before.managed_by, 'file');
  assert.deepEqual(before.memberships, [{ role: 'staff', location_ids: [w.locationId], granted_by: 'file' }]);
  const res = await call(ctx.app, admin, 'PATCH', `/api/admin/people/${w.staff.id}`, { status: 'disabled', version: before.version });
  assert.equal(res.statusCode, 409);
  assert.equal(res.json().code, 'managed_by_file');
  assert.deepEqual((await call(ctx.app, admin, 'GET', `/api/admin/people/${w.staff.id}`)).json(), before);
});

test('a session without its CSRF token, or from another origin, is 403 csrf_failed and changes nothing', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const body = { email: email('c'), name: 'C', memberships: [{ role: 'staff', location_ids: [w.locationId] }] };
  for (const headers of [{ cookie: s.cookie }, { ...fromPage(s), origin: 'https://evil.example' }]) {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/admin/people', headers, payload: body });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'csrf_failed');
  }
  assert.equal((await ctx.db.query('SELECT 1 FROM people WHERE email = $1', [body.email])).length, 0);
  const read = await ctx.app.inject({ method: 'GET', url: '/api/admin/people', headers: { cookie: s.cookie } });
  assert.equal(read.statusCode, 200, 'reads need no CSRF token');
});

test('malformed input is a 4xx, never a 5xx, and stores nothing', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const staffAtA = [{ role: 'staff', location_ids: [w.locationId] }];
  const person = (await call(ctx.app, admin, 'POST', '/api/admin/people', { email: email('m'), name: 'M', memberships: staffAtA })).json();
  const cases: [string, string, unknown?, Record<string, string>?][] = [
    ['POST', '/api/admin/people', { email: email('a'), name: '\ud800', memberships: staffAtA }],
    ['POST', '/api/admin/people', { email: 'a\u0000b@example.com', name: 'A', memberships: staffAtA }],
    ['POST', '/api/admin/people', { email: 'a\udc00@example.com', name: 'A', memberships: staffAtA }],
    ['POST', '/api/admin/people', { email: email('a'), name: 'A', memberships: [{ role: 'staff', location_ids: [2 ** 40] }] }],
    ['POST', '/api/admin/people', { email: email('a'), name: 'A', memberships: staffAtA, pin: '1'.repeat(100) }],
    ['POST', '/api/admin/people', { email: email('a'), name: 'A', memberships: staffAtA, badge_code: 'b\u0000' }],
    ['POST', '/api/admin/people', [1, 2, 3]],
    ['GET', '/api/admin/people?location_id=99999999999'],
    ['GET', '/api/admin/people/0'],
    ['GET', '/api/admin/people/abc'],
    ['PATCH', `/api/admin/people/${person.id}`, { name: 'N' }, { 'if-match': 'garbage' }],
    ['PATCH', `/api/admin/people/${person.id}`, { name: 'N', version: -1 }],
    ['PATCH', `/api/admin/people/${person.id}`, { name: 'N', version: 1, memberships: [{ role: 'staff', location_ids: [] }] }],
    ['POST', '/api/admin/sso_role_mappings', { claim_value: '\udfff', role: 'staff', location_ids: [w.locationId] }],
    ['DELETE', '/api/admin/sso_role_mappings/1?version=abc'],
    ['POST', '/api/admin/service_accounts', { name: 'x\u0000' }],
    ['POST', '/api/admin/service_accounts/99999999999/tokens', { name: 'x', scopes: ['cfh'] }],
  ];
  for (const [method, url, payload, headers] of cases) {
    const res = await call(ctx.app, admin, method as 'GET', url, payload, headers);
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${method} ${url} ${JSON.stringify(payload)}: ${res.statusCode} ${res.body}`);
    assert.equal(typeof res.json().code, 'string');
  }
  const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM people WHERE organization_id = $1', [w.organizationId]);
  assert.equal(count?.n, 4, 'Sam, Lou, Stu and M');
});

test("only an organization-wide administrator sets another person's password, PIN or badge: a credential outlives the roles it was set for", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  await adminManaged(ctx.db, w.staff.id);
  const [staff] = await ctx.db.query<{ version: number }>('SELECT version FROM people WHERE id = $1', [w.staff.id]);
  const grant = [{ role: 'staff', location_ids: [w.locationId] }];
  for (const caller of [await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)]) {
    for (const secret of [{ password: true }, { pin: '123456' }, { badge_code: 'B-77' }]) {
      const made = await call(ctx.app, caller, 'POST', '/api/admin/people', {
        email: `new-${freshId()}@example.com`,
        name: 'New',
        memberships: grant,
        ...secret,
      });
      assert.equal(made.statusCode, 403, JSON.stringify(secret));
      const changed = await call(ctx.app, caller, 'PATCH', `/api/admin/people/${w.staff.id}`, { version: staff?.version, ...secret });
      assert.equal(changed.statusCode, 403, JSON.stringify(secret));
    }
    const plain = await call(ctx.app, caller, 'POST', '/api/admin/people', { email: `plain-${freshId()}@example.com`, name: 'Plain', memberships: grant });
    assert.equal(plain.statusCode, 201, 'people without credentials they may still make');
  }
  const byOrgAdmin = await call(ctx.app, await sessionOf(ctx.app, w.admin), 'POST', '/api/admin/people', {
    email: `otp-${freshId()}@example.com`,
    name: 'Otp',
    memberships: grant,
    password: true,
    pin: '123456',
  });
  assert.equal(byOrgAdmin.statusCode, 201, byOrgAdmin.body);
  assert.match(byOrgAdmin.json().one_time_password, /^\S{20}$/);
});

test('a location the person sees as staff but does not administer is 403 for its people; one out of reach 404', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const mixed = await makePerson(ctx.db, ctx.clock, w.organizationId, {
    name: 'Max',
    role: 'location_admin',
    locationIds: [w.locationId],
    more: [{ role: 'staff', locationIds: [w.locationB] }],
  });
  const max = await sessionOf(ctx.app, mixed);
  assert.equal((await call(ctx.app, max, 'GET', `/api/admin/people?location_id=${w.locationId}`)).statusCode, 200);
  const staffThere = await call(ctx.app, max, 'GET', `/api/admin/people?location_id=${w.locationB}`);
  assert.deepEqual([staffThere.statusCode, staffThere.json().code], [403, 'forbidden']);
  assert.equal((await call(ctx.app, max, 'GET', `/api/admin/people?location_id=${w.other.locationId}`)).statusCode, 404);
});
