// Section 18's people through HTTP: making and changing people with their audit entries (no secret
// in them), versions, sessions that end when a person is disabled, the last org_admin, unique emails
// and badges, 422 by field, and the one-time password. Who may do what: admin-people-access.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../support/world.ts';
import { makePerson, signInHttp } from '../support/people.ts';
import { adminManaged, adminWorld, auditOf, auditText, call, sessionOf, type Caller } from './admin-support.ts';

const email = (name: string) => `${name}.${Math.random().toString(36).slice(2, 10)}@example.com`;

test('an org admin makes a person: the answer shows the one-time password once, the person never shows a secret, and the audit log has no secret', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const body = {
    email: email('Ann'),
    name: 'Ann Lee',
    language: 'fr',
    memberships: [{ role: 'location_admin', location_ids: [w.locationId] }],
    password: true,
    pin: '482913',
    badge_code: 'BADGE-0042',
  };
  const res = await call(ctx.app, admin, 'POST', '/api/admin/people', body);
  assert.equal(res.statusCode, 201, res.body);
  const made = res.json();
  assert.match(made.one_time_password, /^[a-zA-Z0-9]{20}$/);
  assert.equal(res.headers.etag, '"1"');
  const { id, created_at, updated_at, one_time_password, ...rest } = made;
  assert.ok(typeof id === 'number' && typeof created_at === 'string' && typeof updated_at === 'string' && one_time_password);
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    email: body.email,
    name: 'Ann Lee',
    status: 'active',
    language: 'fr',
    memberships: [{ role: 'location_admin', location_ids: [w.locationId], granted_by: 'admin' }],
    has_password: true,
    must_change_password: true,
    has_pin: true,
    has_badge: true,
    version: 1,
    managed_by: 'admin',
  });
  const read = await call(ctx.app, admin, 'GET', `/api/admin/people/${id}`);
  assert.equal(read.statusCode, 200);
  assert.equal(read.json().one_time_password, undefined, 'shown once');
  assert.deepEqual(read.json(), { ...rest, id, created_at, updated_at });

  const entries = await auditOf(ctx.db, w.organizationId, ['person.created', 'membership.granted']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor_type, e.actor_id, e.target_id, e.location_id]),
    [
      ['person.created', 'person', String(w.admin.id), String(id), null],
      ['membership.granted', 'person', String(w.admin.id), String(id), w.locationId],
    ],
  );
  assert.deepEqual(entries[0]?.changes.password, { from: null, to: '[secret]' });
  assert.deepEqual(entries[0]?.changes.pin, { from: null, to: '[secret]' });
  assert.deepEqual(entries[0]?.changes.badge_code, { from: null, to: '[secret]' });
  const all = await auditText(ctx.db, w.organizationId);
  for (const secret of [made.one_time_password, '482913', 'BADGE-0042']) assert.ok(!all.includes(secret), `no ${secret} in the audit log`);

  // The one-time password signs in, and must be changed before anything else.
  const signedIn = await ctx.app.inject({ method: 'POST', url: '/api/session', payload: { email: body.email, password: made.one_time_password } });
  assert.equal(signedIn.statusCode, 200, signedIn.body);
  assert.equal(signedIn.json().must_change_password, true);
  const ann = { session: { cookie: String(signedIn.headers['set-cookie']).split(';')[0] as string, setCookie: '', csrf: signedIn.json().csrf_token } };
  const blocked = await call(ctx.app, ann, 'GET', '/api/admin/people');
  assert.equal(blocked.statusCode, 403);
  assert.equal(blocked.json().code, 'password_change_required');
});

test('updatePerson changes what is sent, with If-Match or version; a stale version is 412 and changes nothing; none is 428', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const made = (
    await call(ctx.app, admin, 'POST', '/api/admin/people', {
      email: email('kim'),
      name: 'Kim',
      memberships: [{ role: 'staff', location_ids: [w.locationId] }],
    })
  ).json();
  const url = `/api/admin/people/${made.id}`;

  const renamed = await call(ctx.app, admin, 'PATCH', url, { name: 'Kim Park' }, { 'if-match': '"1"' });
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.equal(renamed.json().name, 'Kim Park');
  assert.equal(renamed.json().version, 2);
  assert.equal(renamed.headers.etag, '"2"');

  const stale = await call(ctx.app, admin, 'PATCH', url, { name: 'Someone Else', memberships: [] }, { 'if-match': '"1"' });
  assert.equal(stale.statusCode, 412);
  assert.equal(stale.json().code, 'version_conflict');
  const staleBody = await call(ctx.app, admin, 'PATCH', url, { status: 'disabled', version: 1 });
  assert.equal(staleBody.statusCode, 412);
  const none = await call(ctx.app, admin, 'PATCH', url, { name: 'Nobody' });
  assert.equal(none.statusCode, 428);
  assert.equal(none.json().code, 'version_required');
  const after = (await call(ctx.app, admin, 'GET', url)).json();
  assert.equal(after.name, 'Kim Park');
  assert.equal(after.status, 'active');
  assert.equal(after.version, 2);
  assert.deepEqual(after.memberships, made.memberships);
  assert.equal((await auditOf(ctx.db, w.organizationId, ['person.updated', 'person.disabled', 'membership.revoked'])).length, 1);

  const moved = await call(ctx.app, admin, 'PATCH', url, { version: 2, memberships: [{ role: 'staff', location_ids: [w.locationB] }], pin: '123456' });
  assert.equal(moved.statusCode, 200, moved.body);
  assert.deepEqual(moved.json().memberships, [{ role: 'staff', location_ids: [w.locationB], granted_by: 'admin' }]);
  assert.equal(moved.json().has_pin, true);
  const entries = await auditOf(ctx.db, w.organizationId, ['person.updated', 'membership.granted', 'membership.revoked']);
  assert.deepEqual(
    entries.slice(-3).map((e) => [e.action, e.location_id, e.changes]),
    [
      ['person.updated', null, { pin: { from: null, to: '[secret]' } }],
      ['membership.granted', w.locationB, { role: { from: null, to: 'staff' } }],
      ['membership.revoked', w.locationId, { role: { from: 'staff', to: null } }],
    ],
  );
  const same = await call(ctx.app, admin, 'PATCH', url, { name: 'Kim Park' }, { 'if-match': '"3"' });
  assert.equal(same.json().version, 3, 'nothing to change: no new version');
});

test('disabling a person ends their live session at its next request; removing their last membership does too; endPersonSessions ends them', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const adminSession = await signInHttp(ctx.app, w.admin);
  const admin: Caller = { session: adminSession };
  const kim = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId] });
  const lee = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Lee', role: 'staff', locationIds: [w.locationId] });
  const ray = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Ray', role: 'staff', locationIds: [w.locationId] });
  for (const p of [kim, lee, ray]) await adminManaged(ctx.db, p.id);
  const [kimS, leeS, rayS] = [await signInHttp(ctx.app, kim), await signInHttp(ctx.app, lee), await signInHttp(ctx.app, ray)];
  const queue = (s: { cookie: string }) =>
    ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  for (const s of [kimS, leeS, rayS]) assert.equal((await queue(s)).statusCode, 200);

  const version = async (id: number) => (await call(ctx.app, admin, 'GET', `/api/admin/people/${id}`)).json().version as number;
  const disabled = await call(ctx.app, admin, 'PATCH', `/api/admin/people/${kim.id}`, { status: 'disabled', version: await version(kim.id) });
  assert.equal(disabled.statusCode, 200, disabled.body);
  assert.equal((await queue(kimS)).statusCode, 401);
  const removed = await call(ctx.app, admin, 'PATCH', `/api/admin/people/${lee.id}`, { memberships: [], version: await version(lee.id) });
  assert.equal(removed.statusCode, 200, removed.body);
  assert.equal((await queue(leeS)).statusCode, 401);
  const ended = await call(ctx.app, admin, 'POST', `/api/admin/people/${ray.id}/sessions/end`);
  assert.deepEqual(ended.json(), { person_id: ray.id, sessions_ended: 1 });
  assert.equal((await queue(rayS)).statusCode, 401);
  assert.equal((await queue(adminSession)).statusCode, 200, "the admin's own session goes on");

  const entries = await auditOf(ctx.db, w.organizationId, ['person.disabled', 'membership.revoked', 'person.sessions_ended']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.target_id, e.changes]),
    [
      ['person.disabled', String(kim.id), { status: { from: 'active', to: 'disabled' } }],
      ['person.sessions_ended', String(kim.id), { sessions_ended: { from: null, to: 1 } }],
      ['membership.revoked', String(lee.id), { role: { from: 'staff', to: null } }],
      ['person.sessions_ended', String(ray.id), { sessions_ended: { from: null, to: 1 } }],
    ],
  );
  // Enabled again, Kim signs in anew: the old cookie stays ended.
  await call(ctx.app, admin, 'PATCH', `/api/admin/people/${kim.id}`, { status: 'active', version: await version(kim.id) });
  assert.equal((await queue(kimS)).statusCode, 401);
  assert.equal((await queue(await signInHttp(ctx.app, kim))).statusCode, 200);
});

test("the organization's last active org_admin cannot be disabled or demoted (409), and another can", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  await adminManaged(ctx.db, w.admin.id);
  const admin = await sessionOf(ctx.app, w.admin);
  const url = `/api/admin/people/${w.admin.id}`;
  for (const change of [{ status: 'disabled' }, { memberships: [{ role: 'location_admin', location_ids: [w.locationId] }] }]) {
    const res = await call(ctx.app, admin, 'PATCH', url, { ...change, version: 1 });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().code, 'last_org_admin');
  }
  const after = (await call(ctx.app, admin, 'GET', url)).json();
  assert.equal(after.version, 1);
  assert.deepEqual(after.memberships, [{ role: 'org_admin', location_ids: null, granted_by: 'admin' }]);
  const second = await call(ctx.app, admin, 'POST', '/api/admin/people', { email: email('two'), name: 'Two', memberships: [{ role: 'org_admin' }] });
  assert.equal(second.statusCode, 201);
  const demoted = await call(ctx.app, admin, 'PATCH', url, { memberships: [{ role: 'location_admin', location_ids: [w.locationId] }], version: 1 });
  assert.equal(demoted.statusCode, 200, demoted.body);
});

test('emails are unique without case and badges within the organization (409); bad fields are 422 by field', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const staffAtA = [{ role: 'staff', location_ids: [w.locationId] }];
  const first = await call(ctx.app, admin, 'POST', '/api/admin/people', { email: email('dup'), name: 'D', memberships: staffAtA, badge_code: 'B-1' });
  assert.equal(first.statusCode, 201);
  const sameEmail = await call(ctx.app, admin, 'POST', '/api/admin/people', { email: first.json().email.toUpperCase(), name: 'E', memberships: staffAtA });
  assert.equal(sameEmail.statusCode, 409);
  assert.equal(sameEmail.json().code, 'email_taken');
  const sameBadge = await call(ctx.app, admin, 'POST', '/api/admin/people', { email: email('b'), name: 'F', memberships: staffAtA, badge_code: ' B-1 ' });
  assert.equal(sameBadge.statusCode, 409);
  assert.equal(sameBadge.json().code, 'badge_taken');

  const bad: [unknown, string][] = [
    [{ email: 'not-an-email', name: 'G', memberships: staffAtA }, 'email'],
    [{ email: email('g'), name: '  ', memberships: staffAtA }, 'name'],
    [{ email: email('g'), name: 'G', memberships: staffAtA, pin: '12ab' }, 'pin'],
    [{ email: email('g'), name: 'G', memberships: [{ role: 'org_admin', location_ids: [w.locationId] }] }, 'memberships[0].location_ids'],
    [{ email: email('g'), name: 'G', memberships: [{ role: 'staff' }] }, 'memberships[0].location_ids'],
    [{ email: email('g'), name: 'G', memberships: [{ role: 'boss' }] }, 'memberships[0].role'],
    [{ email: email('g'), name: 'G', memberships: [] }, 'memberships'],
    [{ email: email('g'), name: 'G', memberships: staffAtA, organization_id: w.other.organizationId }, 'organization_id'],
  ];
  for (const [body, field] of bad) {
    const res = await call(ctx.app, admin, 'POST', '/api/admin/people', body);
    assert.equal(res.statusCode, 422, `${field}: ${res.body}`);
    assert.ok(field in res.json().errors, `${field}: ${res.body}`);
  }
  assert.equal((await ctx.db.query("SELECT 1 FROM people WHERE name IN ('E', 'F', 'G')")).length, 0);
});

test('two org admins demoting each other at once: one change wins, the other is refused, and an org_admin is left', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const second = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Ada' });
  for (const id of [w.admin.id, second.id]) await adminManaged(ctx.db, id);
  const [sam, ada] = [await sessionOf(ctx.app, w.admin), await sessionOf(ctx.app, second)];
  const demote = (caller: Caller, id: number) =>
    call(ctx.app, caller, 'PATCH', `/api/admin/people/${id}`, { memberships: [{ role: 'staff', location_ids: [w.locationId] }], version: 1 });
  const answers = await Promise.all([demote(sam, second.id), demote(ada, w.admin.id)]);
  // The loser is 409 when both ran together, or 403 when the winner committed first (its author is
  // no longer an admin by the time its own request reads the session).
  const [won, lost] = answers.map((r) => r.statusCode).sort();
  assert.ok(won === 200 && (lost === 409 || lost === 403), answers.map((r) => r.body).join('\n'));
  const [left] = await ctx.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memberships m JOIN people p ON p.id = m.person_id WHERE p.organization_id = $1 AND m.role = 'org_admin'",
    [w.organizationId],
  );
  assert.equal(left?.n, 1);
});
