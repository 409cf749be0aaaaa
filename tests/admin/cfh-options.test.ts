// Section 18's CFH options and outcomes through HTTP: an option for the whole organization
// (organization admins only) or one location (a location admin's override at its stores); an
// option or outcome in use is kept (409 in_use) and retired with enabled false (a retired option is
// refused to new requests, reports still show the old ones); the file's are the file's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../support/world.ts';
import { assertCode, assertField, auditOf, bearer, call, ifMatch, refusedToOutsiders, sessionOf, setupWorld } from './support.ts';

const OPTIONS = '/api/admin/cfh_options';
const OUTCOMES = '/api/admin/cfh_outcomes';

test('an org admin makes options for the whole organization and for a store; a location admin overrides at its stores only', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const texts = { text_en: 'Paint', text_fr: 'Peinture', prompt_en: 'Coming', prompt_fr: 'On arrive' };
  const whole = await call(ctx.app, admin, 'POST', OPTIONS, texts);
  assert.equal(whole.statusCode, 201, whole.body);
  const { id, created_at, updated_at, ...rest } = whole.json();
  assert.ok(id && created_at && updated_at);
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    location_id: null,
    ...texts,
    staff_action: 'claim_and_on_the_way',
    require_scan: false,
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });
  assertField(await call(ctx.app, admin, 'POST', OPTIONS, { ...texts, staff_action: 'dance' }), 'staff_action');
  assertField(await call(ctx.app, admin, 'POST', OPTIONS, { ...texts, text_en: undefined }), 'text_en');

  const lou = await sessionOf(ctx.app, w.locationAdmin);
  assertCode(await call(ctx.app, lou, 'POST', OPTIONS, texts), 403, 'forbidden');
  assertCode(await call(ctx.app, lou, 'PATCH', `${OPTIONS}/${id}`, { text_en: 'x', version: 1 }), 403, 'forbidden');
  assertCode(await call(ctx.app, lou, 'POST', OPTIONS, { ...texts, location_id: w.locationB }), 403, 'forbidden');
  const mine = await call(ctx.app, lou, 'POST', OPTIONS, { ...texts, location_id: w.locationId, text_en: 'Paint here' });
  assert.equal(mine.statusCode, 201, mine.body);
  const seen = ((await call(ctx.app, lou, 'GET', OPTIONS)).json() as { id: number }[]).map((o) => o.id);
  assert.ok(seen.includes(id) && seen.includes(mine.json().id));
  const changed = await call(ctx.app, lou, 'PATCH', `${OPTIONS}/${mine.json().id}`, { staff_action: 'acknowledge' }, ifMatch(1));
  assert.deepEqual([changed.statusCode, changed.json().staff_action, changed.json().version], [200, 'acknowledge', 2]);
  assertCode(await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'PATCH', `${OPTIONS}/${id}`, { text_en: 'x', version: 1 }), 404, 'not_found');

  // In use by a request: kept, retired instead, and then refused to new requests.
  const client = (payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload });
  assert.equal((await client({ location_id: w.locationId, option_id: id })).statusCode, 201);
  assertCode(await call(ctx.app, admin, 'DELETE', `${OPTIONS}/${id}?version=1`), 409, 'in_use');
  await call(ctx.app, admin, 'PATCH', `${OPTIONS}/${id}`, { enabled: false }, ifMatch(1));
  assertField(await client({ location_id: w.locationId, option_id: id }), 'option_id');
  const unused = await call(ctx.app, admin, 'POST', OPTIONS, texts);
  assert.equal((await call(ctx.app, admin, 'DELETE', `${OPTIONS}/${unused.json().id}?version=1`)).statusCode, 204);
  assertCode(await call(ctx.app, admin, 'PATCH', `${OPTIONS}/${w.optionId}`, { text_en: 'x', version: 1 }), 409, 'managed_by_file');
  const entries = await auditOf(ctx.db, w.organizationId, ['cfh_option.created', 'cfh_option.updated', 'cfh_option.disabled', 'cfh_option.deleted']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.location_id]),
    [
      ['cfh_option.created', null],
      ['cfh_option.created', w.locationId],
      ['cfh_option.updated', w.locationId],
      ['cfh_option.disabled', null],
      ['cfh_option.created', null],
      ['cfh_option.deleted', null],
    ],
  );
  await refusedToOutsiders(ctx.app, w, (caller) => [call(ctx.app, caller, 'GET', OPTIONS), call(ctx.app, caller, 'POST', OPTIONS, texts)]);
});

test("outcomes: one key per store (422 by field), a location admin's at its stores, changed by version and deleted", async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const lou = await sessionOf(ctx.app, w.locationAdmin);
  const made = await call(ctx.app, lou, 'POST', OUTCOMES, { location_id: w.locationId, key: 'sale', text_en: 'Made a sale', text_fr: 'Vente' });
  assert.equal(made.statusCode, 201, made.body);
  const { id, created_at, updated_at, ...rest } = made.json();
  assert.ok(id && created_at && updated_at);
  assert.deepEqual(rest, { location_id: w.locationId, key: 'sale', text_en: 'Made a sale', text_fr: 'Vente', enabled: true, version: 1, managed_by: 'admin' });
  assertField(await call(ctx.app, lou, 'POST', OUTCOMES, { location_id: w.locationId, key: 'sale', text_en: 'Again', text_fr: 'Encore' }), 'key');
  assertCode(await call(ctx.app, lou, 'POST', OUTCOMES, { location_id: w.locationB, key: 'sale', text_en: 'B', text_fr: 'B' }), 403, 'forbidden');
  const token = bearer(w.adminToken);
  assert.equal((await call(ctx.app, token, 'POST', OUTCOMES, { location_id: w.locationB, key: 'sale', text_en: 'B', text_fr: 'B' })).statusCode, 201);
  assert.deepEqual(
    ((await call(ctx.app, lou, 'GET', OUTCOMES)).json() as { id: number }[]).map((o) => o.id),
    [id],
  );
  const changed = await call(ctx.app, lou, 'PATCH', `${OUTCOMES}/${id}`, { text_fr: 'Une vente', version: 1 });
  assert.deepEqual([changed.statusCode, changed.json().text_fr], [200, 'Une vente']);
  assertCode(await call(ctx.app, lou, 'DELETE', `${OUTCOMES}/${id}?version=1`), 412, 'version_conflict');
  assert.equal((await call(ctx.app, lou, 'DELETE', `${OUTCOMES}/${id}?version=2`)).statusCode, 204);
  const others = await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'GET', `${OUTCOMES}?location_id=${w.locationB}`);
  assert.deepEqual([others.statusCode, others.json()], [200, []]);
});
