// Section 18's SSO role mappings through HTTP: made and deleted with their audit entries, versions on
// delete, what a location admin and a limited admin token may map and see, the file's mappings, and
// the refusals every administration operation shares.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { signInHttp } from '../support/people.ts';
import { testApp } from '../support/world.ts';
import { adminWorld, auditOf, bearer, call, refusedToOutsiders, sessionOf, type Caller } from './admin-support.ts';

const MAPPINGS = '/api/admin/sso_role_mappings';

test('an org admin maps a claim to a role, lists it, and deletes it with its version; stale is 412 and missing 428', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const made = await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'store-a-staff', role: 'staff', location_ids: [w.locationId] });
  assert.equal(made.statusCode, 201, made.body);
  const { id, created_at, updated_at, ...rest } = made.json();
  assert.ok(id && created_at && updated_at);
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    claim_value: 'store-a-staff',
    role: 'staff',
    location_ids: [w.locationId],
    version: 1,
    managed_by: 'admin',
  });
  const dup = await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'store-a-staff', role: 'staff', location_ids: [w.locationB] });
  assert.deepEqual([dup.statusCode, dup.json().code], [409, 'sso_role_mapping_exists']);
  const org = await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'it-admins', role: 'org_admin' });
  assert.equal(org.statusCode, 201);
  assert.equal(org.json().location_ids, null);
  const list = (await call(ctx.app, admin, 'GET', MAPPINGS)).json() as { id: number }[];
  assert.deepEqual(
    list.map((m) => m.id),
    [id, org.json().id],
  );

  assert.deepEqual([(await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${id}`)).statusCode], [428]);
  const stale = await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${id}`, undefined, { 'if-match': '"7"' });
  assert.deepEqual([stale.statusCode, stale.json().code], [412, 'version_conflict']);
  assert.equal((await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${id}?version=2`)).statusCode, 412);
  const gone = await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${id}`, undefined, { 'if-match': '"1"' });
  assert.equal(gone.statusCode, 204, gone.body);
  assert.equal(gone.body, '');
  assert.equal((await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${id}?version=1`)).statusCode, 404);

  const entries = await auditOf(ctx.db, w.organizationId, ['sso_role_mapping.created', 'sso_role_mapping.deleted']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.target_id, e.location_id, e.changes.role]),
    [
      ['sso_role_mapping.created', String(id), w.locationId, { from: null, to: 'staff' }],
      ['sso_role_mapping.created', String(org.json().id), null, { from: null, to: 'org_admin' }],
      ['sso_role_mapping.deleted', String(id), w.locationId, { from: 'staff', to: null }],
    ],
  );
});

test('a location admin and a limited admin token map staff and location_admin at their locations only, and see only those', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const orgWide = (await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'it', role: 'org_admin' })).json();
  const both = (await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'both', role: 'staff', location_ids: [w.locationId, w.locationB] })).json();
  const atB = (await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'b', role: 'staff', location_ids: [w.locationB] })).json();
  for (const [i, caller] of ([await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)] as Caller[]).entries()) {
    for (const body of [
      { claim_value: `x${i}`, role: 'org_admin' },
      { claim_value: `x${i}`, role: 'staff', location_ids: [w.locationB] },
      { claim_value: `x${i}`, role: 'location_admin', location_ids: [w.locationId, w.locationB] },
    ]) {
      const res = await call(ctx.app, caller, 'POST', MAPPINGS, body);
      assert.deepEqual([res.statusCode, res.json().code], [403, 'forbidden'], JSON.stringify(body));
    }
    const mine = await call(ctx.app, caller, 'POST', MAPPINGS, { claim_value: `store-a-leads-${i}`, role: 'location_admin', location_ids: [w.locationId] });
    assert.equal(mine.statusCode, 201, mine.body);
    const seen = ((await call(ctx.app, caller, 'GET', MAPPINGS)).json() as { id: number }[]).map((m) => m.id);
    assert.ok(seen.includes(both.id) && seen.includes(mine.json().id));
    assert.ok(!seen.includes(orgWide.id) && !seen.includes(atB.id));
    const shared = await call(ctx.app, caller, 'DELETE', `${MAPPINGS}/${both.id}?version=1`);
    assert.deepEqual([shared.statusCode, shared.json().code], [403, 'forbidden'], 'a mapping that also grants at B is not theirs to delete');
    assert.equal((await call(ctx.app, caller, 'DELETE', `${MAPPINGS}/${orgWide.id}?version=1`)).statusCode, 404);
    assert.equal((await call(ctx.app, caller, 'DELETE', `${MAPPINGS}/${mine.json().id}?version=1`)).statusCode, 204);
  }
});

test("the file's mappings are 409 managed_by_file; staff, no admin scope, signed out, another organization, CSRF", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  await applyProvisioning(ctx.db, ctx.clock, {
    sso_role_mappings: [{ claim_value: 'file-staff', organization_id: w.organizationId, role: 'staff', location_ids: [w.locationId] }],
  });
  const signed = await signInHttp(ctx.app, w.admin);
  const admin: Caller = { session: signed };
  const file = ((await call(ctx.app, admin, 'GET', MAPPINGS)).json() as { id: number; claim_value: string; managed_by: string; version: number }[]).find(
    (m) => m.claim_value === 'file-staff',
  );
  assert.equal(file?.managed_by, 'file');
  const refused = await call(ctx.app, admin, 'DELETE', `${MAPPINGS}/${file?.id}?version=${file?.version}`);
  assert.deepEqual([refused.statusCode, refused.json().code], [409, 'managed_by_file']);

  const mine = (await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'mine', role: 'staff', location_ids: [w.locationId] })).json();
  const ops = (caller: Caller) => [
    call(ctx.app, caller, 'GET', MAPPINGS),
    call(ctx.app, caller, 'POST', MAPPINGS, { claim_value: 'z', role: 'staff', location_ids: [w.locationId] }),
    call(ctx.app, caller, 'DELETE', `${MAPPINGS}/${mine.id}?version=1`),
  ];
  await refusedToOutsiders(ctx.app, w, ops);
  const stranger = await sessionOf(ctx.app, w.other.admin);
  assert.equal((await call(ctx.app, stranger, 'DELETE', `${MAPPINGS}/${mine.id}?version=1`)).statusCode, 404);
  assert.deepEqual((await call(ctx.app, stranger, 'GET', MAPPINGS)).json(), []);
  const foreign = await call(ctx.app, stranger, 'POST', MAPPINGS, { claim_value: 'z', role: 'staff', location_ids: [w.locationId] });
  assert.equal(foreign.statusCode, 422, 'a location of another organization is not found');

  const forged = await ctx.app.inject({ method: 'DELETE', url: `${MAPPINGS}/${mine.id}?version=1`, headers: { cookie: signed.cookie } });
  assert.deepEqual([forged.statusCode, forged.json().code], [403, 'csrf_failed']);
  assert.equal((await ctx.db.query('SELECT 1 FROM sso_role_mappings WHERE id = $1', [mine.id])).length, 1, 'still there');
  const bad = await call(ctx.app, admin, 'POST', MAPPINGS, { claim_value: 'y', role: 'staff' });
  assert.deepEqual(Object.keys(bad.json().errors ?? {}), ['location_ids']);
});
