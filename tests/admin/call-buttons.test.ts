// Section 18's call buttons through HTTP: made, read, changed and deleted with their versions and
// audit entries; a new button's first press works at once and a disabled one is refused; the
// refusals (422 by field, 409, 412, 404 across organizations and outside a location admin's stores,
// 403 for staff); the file's buttons are the file's, and the file takes over an admin's button.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, testApp } from '../support/world.ts';
import { assertCode, assertField, auditOf, bearer, call, ifMatch, mac, press, refusedToOutsiders, sessionOf, setupWorld } from './support.ts';

const BUTTONS = '/api/admin/call_buttons';

test('an org admin makes a button whose first press works, reads and changes it by version, disables it (its next press refused) and deletes it', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const key = mac();
  const made = await call(ctx.app, admin, 'POST', BUTTONS, { location_id: w.locationId, name: 'Paint counter', device_key: key, option_id: w.optionId });
  assert.equal(made.statusCode, 201, made.body);
  const { id, created_at, updated_at, ...rest } = made.json();
  assert.ok(Number.isInteger(id) && created_at && updated_at);
  assert.deepEqual(rest, {
    location_id: w.locationId,
    name: 'Paint counter',
    device_key: key,
    option_id: w.optionId,
    chat_channel_id: null,
    require_scan: false,
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });
  assert.equal(made.headers.etag, '"1"');
  const pressed = await press(ctx.app, w.hubToken, key.toLowerCase());
  assert.equal(pressed.statusCode, 200, pressed.body);

  const read = await call(ctx.app, admin, 'GET', `${BUTTONS}/${id}`);
  assert.deepEqual(read.json(), made.json());
  const list = (await call(ctx.app, admin, 'GET', `${BUTTONS}?location_id=${w.locationId}`)).json() as { id: number }[];
  assert.deepEqual(
    list.map((b) => b.id),
    [id],
  );

  assertCode(await call(ctx.app, admin, 'PATCH', `${BUTTONS}/${id}`, { name: 'Paint' }), 428, 'version_required');
  assertCode(await call(ctx.app, admin, 'PATCH', `${BUTTONS}/${id}`, { name: 'Paint', version: 4 }), 412, 'version_conflict');
  const renamed = await call(ctx.app, admin, 'PATCH', `${BUTTONS}/${id}`, { name: 'Paint' }, ifMatch(1));
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.deepEqual([renamed.json().name, renamed.json().version, renamed.json().device_key], ['Paint', 2, key]);
  const off = await call(ctx.app, admin, 'PATCH', `${BUTTONS}/${id}`, { enabled: false, version: 2 });
  assert.equal(off.json().enabled, false, off.body);
  assert.equal((await press(ctx.app, w.hubToken, key)).statusCode, 404);

  // It made a request: it is kept (409 in_use), retired.
  assertCode(await call(ctx.app, admin, 'DELETE', `${BUTTONS}/${id}?version=3`), 409, 'in_use');
  const unused = await call(ctx.app, admin, 'POST', BUTTONS, { location_id: w.locationId, name: 'Unused', device_key: mac(), option_id: w.optionId });
  assertCode(await call(ctx.app, admin, 'DELETE', `${BUTTONS}/${unused.json().id}?version=2`), 412, 'version_conflict');
  assert.equal((await call(ctx.app, admin, 'DELETE', `${BUTTONS}/${unused.json().id}`, undefined, ifMatch(1))).statusCode, 204);
  assert.equal((await call(ctx.app, admin, 'GET', `${BUTTONS}/${unused.json().id}`)).statusCode, 404);

  const entries = await auditOf(ctx.db, w.organizationId, ['call_button.created', 'call_button.updated', 'call_button.disabled', 'call_button.deleted']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.target_id, e.location_id, e.actor_type]),
    [
      ['call_button.created', String(id), w.locationId, 'person'],
      ['call_button.updated', String(id), w.locationId, 'person'],
      ['call_button.disabled', String(id), w.locationId, 'person'],
      ['call_button.created', String(unused.json().id), w.locationId, 'person'],
      ['call_button.deleted', String(unused.json().id), w.locationId, 'person'],
    ],
  );
  assert.deepEqual(entries[1]?.changes, { name: { from: 'Paint counter', to: 'Paint' } });
});

test('a button body is the file entry’s: 422 by field for a bad field, an unknown key, an option of another store, a MAC taken', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  const good = { location_id: w.locationId, name: 'Paint', device_key: mac(), option_id: w.optionId };
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, name: '' }), 'name');
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, colour: 'red' }), 'colour');
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, option_id: w.other.optionId }), 'option_id');
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, location_id: w.other.locationId }), 'location_id');
  assert.equal((await call(ctx.app, token, 'POST', BUTTONS, good)).statusCode, 201);
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, name: 'Twin', device_key: good.device_key.toLowerCase() }), 'device_key');
  const made = await call(ctx.app, token, 'POST', BUTTONS, { ...good, device_key: mac(), id: freshId() });
  assert.equal(made.statusCode, 201, made.body);
  assertField(await call(ctx.app, token, 'POST', BUTTONS, { ...good, device_key: mac(), id: made.json().id }), 'id');
  assertField(await call(ctx.app, token, 'PATCH', `${BUTTONS}/${made.json().id}`, { option_id: w.other.optionId, version: 1 }), 'option_id');
});

test('a location admin and a limited token reach their stores’ buttons only; other organizations’ are 404; staff and other tokens are refused', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = bearer(w.adminToken);
  const optionB = freshId();
  await applyProvisioning(ctx.db, ctx.clock, {
    cfh_options: [{ id: optionB, organization_id: w.organizationId, text_en: 'Help', text_fr: 'Aide', prompt_en: '', prompt_fr: '' }],
  });
  const inB = await call(ctx.app, admin, 'POST', BUTTONS, { location_id: w.locationB, name: 'B', device_key: mac(), option_id: optionB });
  assert.equal(inB.statusCode, 201, inB.body);
  const inA = await call(ctx.app, admin, 'POST', BUTTONS, { location_id: w.locationId, name: 'A', device_key: mac(), option_id: w.optionId });
  for (const caller of [await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)]) {
    const list = (await call(ctx.app, caller, 'GET', BUTTONS)).json() as { id: number }[];
    assert.deepEqual(
      list.map((b) => b.id),
      [inA.json().id],
    );
    assertCode(await call(ctx.app, caller, 'GET', `${BUTTONS}/${inB.json().id}`), 404, 'not_found');
    assertCode(await call(ctx.app, caller, 'PATCH', `${BUTTONS}/${inB.json().id}`, { name: 'x', version: 1 }), 404, 'not_found');
    const made = await call(ctx.app, caller, 'POST', BUTTONS, { location_id: w.locationB, name: 'B2', device_key: mac(), option_id: optionB });
    assertCode(made, 403, 'forbidden');
  }
  const other = await sessionOf(ctx.app, w.other.admin);
  assertCode(await call(ctx.app, other, 'GET', `${BUTTONS}/${inA.json().id}`), 404, 'not_found');
  assertCode(await call(ctx.app, other, 'DELETE', `${BUTTONS}/${inA.json().id}?version=1`), 404, 'not_found');
  await refusedToOutsiders(ctx.app, w, (caller) => [
    call(ctx.app, caller, 'GET', BUTTONS),
    call(ctx.app, caller, 'GET', `${BUTTONS}/${inA.json().id}`),
    call(ctx.app, caller, 'POST', BUTTONS, { location_id: w.locationId, name: 'S', device_key: mac(), option_id: w.optionId }),
    call(ctx.app, caller, 'PATCH', `${BUTTONS}/${inA.json().id}`, { name: 'S', version: 1 }),
    call(ctx.app, caller, 'DELETE', `${BUTTONS}/${inA.json().id}?version=1`),
  ]);
});

test('a button of the file is refused (409 managed_by_file); a file naming an admin button takes it over with an audit entry', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = bearer(w.adminToken);
  const fileButton = { id: freshId(), location_id: w.locationId, name: 'From file', device_key: mac(), option_id: w.optionId };
  await applyProvisioning(ctx.db, ctx.clock, { call_buttons: [fileButton] });
  const read = await call(ctx.app, admin, 'GET', `${BUTTONS}/${fileButton.id}`);
  assert.deepEqual([read.json().managed_by, read.json().version], ['file', 1]);
  assertCode(await call(ctx.app, admin, 'PATCH', `${BUTTONS}/${fileButton.id}`, { name: 'x', version: 1 }), 409, 'managed_by_file');
  assertCode(await call(ctx.app, admin, 'DELETE', `${BUTTONS}/${fileButton.id}?version=1`), 409, 'managed_by_file');

  const made = await call(ctx.app, admin, 'POST', BUTTONS, { location_id: w.locationId, name: 'Admin', device_key: mac(), option_id: w.optionId });
  const id = made.json().id as number;
  await applyProvisioning(ctx.db, ctx.clock, { call_buttons: [{ ...fileButton, id, device_key: mac(), name: 'Now the file’s' }] }, { source: 'store.json' });
  const taken = await call(ctx.app, admin, 'GET', `${BUTTONS}/${id}`);
  assert.deepEqual([taken.json().managed_by, taken.json().name, taken.json().version], ['file', 'Now the file’s', 2]);
  const entries = await auditOf(ctx.db, w.organizationId, ['call_button.taken_over']);
  assert.deepEqual(
    entries.map((e) => [e.target_id, e.actor_type, e.changes]),
    [[String(id), 'provisioning', { managed_by: { from: 'admin', to: 'file' } }]],
  );
});
