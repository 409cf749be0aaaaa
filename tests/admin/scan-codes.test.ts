// Section 18's options, buttons and displays with require_scan (section 19): the scan code is made
// with the object and shown in the create's answer only, kept as its digest, never in a read, a
// list or the audit log; rotating it shows a new one and the old one no longer matches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scanCodeDigest } from '../../src/cfh/scan-codes.ts';
import { testApp } from '../support/world.ts';
import { assertCode, assertNowhere, auditOf, call, ifMatch, mac, sessionOf, setupWorld } from './support.ts';

const CODE = /^[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{6}$/;

test('a button made with require_scan shows its scan code once; rotating it makes the old one fail; neither is ever shown again', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const plain = await call(ctx.app, admin, 'POST', '/api/admin/call_buttons', {
    location_id: w.locationId,
    name: 'Plain',
    device_key: mac(),
    option_id: w.optionId,
  });
  assert.equal(plain.statusCode, 201, plain.body);
  assert.equal(plain.json().scan_code, undefined, 'no scan code without require_scan');

  const made = await call(ctx.app, admin, 'POST', '/api/admin/call_buttons', {
    location_id: w.locationId,
    name: 'Paint',
    device_key: mac(),
    option_id: w.optionId,
    require_scan: true,
  });
  assert.equal(made.statusCode, 201, made.body);
  const { id, scan_code: first, require_scan } = made.json();
  assert.match(first, CODE);
  assert.equal(require_scan, true);
  const digestOf = async () => (await ctx.db.query<{ h: string }>('SELECT scan_code_hash AS h FROM call_buttons WHERE id = $1', [id]))[0]?.h;
  assert.equal(await digestOf(), scanCodeDigest(first), 'kept as its digest');

  const rotated = await call(ctx.app, admin, 'POST', `/api/admin/call_buttons/${id}/scan_code`, undefined, ifMatch(1));
  assert.equal(rotated.statusCode, 200, rotated.body);
  const second = rotated.json().scan_code;
  assert.match(second, CODE);
  assert.notEqual(second, first);
  assert.equal(await digestOf(), scanCodeDigest(second));
  assert.equal(rotated.json().version, 2);
  assertCode(await call(ctx.app, admin, 'POST', `/api/admin/call_buttons/${id}/scan_code`, undefined, ifMatch(1)), 412, 'version_conflict');

  for (const code of [first, second]) {
    await assertNowhere(ctx.app, ctx.db, w, admin, code, [`/api/admin/call_buttons/${id}`, `/api/admin/call_buttons?location_id=${w.locationId}`]);
  }
  const entries = await auditOf(ctx.db, w.organizationId, ['call_button.scan_code_rotated']);
  assert.deepEqual(entries[0]?.changes, { scan_code: { from: '[secret]', to: '[secret]' } });
});

test('an option and a display made with require_scan show their codes once; turning it on by an update leaves the code to a rotation', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const option = await call(ctx.app, admin, 'POST', '/api/admin/cfh_options', {
    location_id: w.locationId,
    text_en: 'Keys',
    text_fr: 'Clés',
    prompt_en: 'Coming',
    prompt_fr: 'On arrive',
    require_scan: true,
  });
  assert.equal(option.statusCode, 201, option.body);
  assert.match(option.json().scan_code, CODE);

  const display = await call(ctx.app, admin, 'POST', '/api/admin/displays', {
    location_id: w.locationId,
    name: 'Entrance',
    option_ids: [w.optionId],
    require_scan: true,
  });
  assert.equal(display.statusCode, 201, display.body);
  assert.match(display.json().scan_code, CODE);
  assert.ok(display.json().key && display.json().url, 'the key shown too');

  const later = await call(ctx.app, admin, 'POST', '/api/admin/displays', { location_id: w.locationId, name: 'Aisle', option_ids: [w.optionId] });
  const on = await call(ctx.app, admin, 'PATCH', `/api/admin/displays/${later.json().id}`, { require_scan: true }, ifMatch(1));
  assert.equal(on.statusCode, 200, on.body);
  assert.deepEqual([on.json().require_scan, on.json().scan_code], [true, undefined]);
  const code = await call(ctx.app, admin, 'POST', `/api/admin/displays/${later.json().id}/scan_code`, undefined, ifMatch(2));
  assert.match(code.json().scan_code, CODE, code.body);

  const staff = await sessionOf(ctx.app, w.staff);
  assertCode(await call(ctx.app, staff, 'POST', `/api/admin/displays/${later.json().id}/scan_code`, undefined, ifMatch(3)), 403, 'forbidden');
});
