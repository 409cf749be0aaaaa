// Section 18's locations through HTTP: only organization admins make one; a location admin changes
// its own (a new timer applies to the requests created after it); none is deleted; a retired
// location refuses new requests; the refusals every administration operation gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../support/world.ts';
import { assertCode, assertField, auditOf, bearer, call, ifMatch, refusedToOutsiders, sessionOf, setupWorld } from './support.ts';

const LOCATIONS = '/api/admin/locations';

test('an org admin makes a location (its id the service’s), a location admin may not; a location admin changes its own store only', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const made = await call(ctx.app, admin, 'POST', LOCATIONS, {
    name: 'Store 42',
    store_number: '042',
    time_zone: 'America/Toronto',
    cfh_escalation_seconds: 90,
  });
  assert.equal(made.statusCode, 201, made.body);
  const { id, created_at, updated_at, ...rest } = made.json();
  assert.ok(Number.isInteger(id) && created_at && updated_at);
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    name: 'Store 42',
    store_number: '042',
    time_zone: 'America/Toronto',
    cfh_timeout_seconds: null,
    locker_pickup_hours: null,
    locker_reminder_hours: null,
    cfh_escalation_seconds: 90,
    cfh_reminder_seconds: null,
    cfh_reminder_claimed_seconds: null,
    cfh_reminder_cap_seconds: null,
    cfh_auto_complete_seconds: null,
    staff_name_format: null,
    call_button_cooldown_seconds: null,
    language: null,
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });
  assert.ok(((await call(ctx.app, admin, 'GET', LOCATIONS)).json() as { id: number }[]).some((l) => l.id === id));
  assertField(await call(ctx.app, admin, 'POST', LOCATIONS, { name: 'Bad', time_zone: '+05:00' }), 'time_zone');
  assertField(await call(ctx.app, admin, 'POST', LOCATIONS, { name: 'Bad', language: 'de' }), 'language');
  assertField(await call(ctx.app, admin, 'POST', LOCATIONS, { name: 'Bad', organization_id: w.other.organizationId }), 'organization_id');

  const lou = await sessionOf(ctx.app, w.locationAdmin);
  assertCode(await call(ctx.app, lou, 'POST', LOCATIONS, { name: 'Mine' }), 403, 'forbidden');
  assertCode(await call(ctx.app, bearer(w.limitedToken), 'POST', LOCATIONS, { name: 'Mine' }), 403, 'forbidden');
  assert.deepEqual(
    ((await call(ctx.app, lou, 'GET', LOCATIONS)).json() as { id: number }[]).map((l) => l.id),
    [w.locationId],
  );
  assertCode(await call(ctx.app, lou, 'GET', `${LOCATIONS}/${id}`), 404, 'not_found');
  assertCode(await call(ctx.app, lou, 'PATCH', `${LOCATIONS}/${w.locationId}`, { name: 'x', version: 1 }), 409, 'managed_by_file');
  assertCode(await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'GET', `${LOCATIONS}/${id}`), 404, 'not_found');

  const changed = await call(ctx.app, admin, 'PATCH', `${LOCATIONS}/${id}`, { cfh_escalation_seconds: 30, language: 'fr' }, ifMatch(1));
  assert.deepEqual([changed.statusCode, changed.json().cfh_escalation_seconds, changed.json().language, changed.json().version], [200, 30, 'fr', 2]);
  assertCode(await call(ctx.app, admin, 'DELETE', `${LOCATIONS}/${id}?version=2`), 404, 'not_found');
  const entries = await auditOf(ctx.db, w.organizationId, ['location.created', 'location.updated']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.target_id, e.location_id]),
    [
      ['location.created', String(id), null],
      ['location.updated', String(id), null],
    ].map(([a, i]) => [a, i, Number(i)]),
  );
  assert.deepEqual(entries[1]?.changes, { cfh_escalation_seconds: { from: 90, to: 30 }, language: { from: null, to: 'fr' } });
  await refusedToOutsiders(ctx.app, w, (caller) => [
    call(ctx.app, caller, 'GET', LOCATIONS),
    call(ctx.app, caller, 'POST', LOCATIONS, { name: 'S' }),
    call(ctx.app, caller, 'PATCH', `${LOCATIONS}/${id}`, { name: 'S', version: 2 }),
  ]);
});

test('a retired location refuses new requests, and a new timer applies to the requests created after it', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  const store = (await call(ctx.app, token, 'POST', LOCATIONS, { name: 'Timers' })).json() as { id: number };
  const option = await call(ctx.app, token, 'POST', '/api/admin/cfh_options', { text_en: 'Help', text_fr: 'Aide', prompt_en: 'Coming', prompt_fr: 'Arrive' });
  assert.equal(option.statusCode, 201, option.body);
  const ask = () =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${w.token}` },
      payload: { location_id: store.id, option_id: option.json().id },
    });
  const first = await ask();
  assert.equal(first.statusCode, 201, first.body);
  await call(ctx.app, token, 'PATCH', `${LOCATIONS}/${store.id}`, { cfh_timeout_seconds: 77 }, ifMatch(1));
  const second = await ask();
  const timeouts = await ctx.db.query<{ seconds: number }>(
    `SELECT extract(epoch FROM j.run_at - r.created_at)::int AS seconds FROM cfh_requests r
     JOIN jobs j ON j.kind = 'cfh.timeout' AND (j.payload->>'request_id')::int = r.id
     WHERE r.message_id = ANY ($1::text[]) ORDER BY r.id`,
    [[first.json().message_id, second.json().message_id]],
  );
  assert.equal(timeouts[1]?.seconds, 77);
  assert.notEqual(timeouts[0]?.seconds, 77);
  await call(ctx.app, token, 'PATCH', `${LOCATIONS}/${store.id}`, { enabled: false }, ifMatch(2));
  assertField(await ask(), 'location_id');
  const entries = await auditOf(ctx.db, w.organizationId, ['location.disabled']);
  assert.deepEqual(
    entries.map((e) => e.target_id),
    [String(store.id)],
  );
});
