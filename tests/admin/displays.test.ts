// Section 18's displays through HTTP: the key made by the service is shown once (create, rotate),
// never in a list, a read or the audit log; its QR code (getDisplayQr), rendered by Chromium and
// read by a QR decoder, is exactly the page's URL; the page (and its deployed QR path) serves the
// new display at once, refuses the old key after a rotation and a retired display.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsQR from 'jsqr';
import { browserContext, skipWithoutChromium } from '../support/browser.ts';
import { testApp } from '../support/world.ts';
import { assertCode, assertField, assertNowhere, auditOf, bearer, call, ifMatch, sessionOf, setupWorld } from './support.ts';

const DISPLAYS = '/api/admin/displays';

test('a display made by an admin shows its key and page once, its page works at once, a rotation refuses the old key, a retired one is closed', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const made = await call(ctx.app, admin, 'POST', DISPLAYS, { location_id: w.locationId, name: 'Entrance', option_ids: [w.optionId] });
  assert.equal(made.statusCode, 201, made.body);
  const { id, key, url, created_at, updated_at, ...rest } = made.json();
  assert.ok(created_at && updated_at);
  assert.match(key, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(url, `http://storeops.test/help/${key}`);
  assert.deepEqual(rest, {
    location_id: w.locationId,
    name: 'Entrance',
    option_ids: [w.optionId],
    allow_custom_text: false,
    chat_channel_id: null,
    require_scan: false,
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });
  assert.equal((await ctx.app.inject({ url: `/help/${key}` })).statusCode, 200);
  assert.equal((await ctx.app.inject({ url: `/callforhelp/v1/display/CFH.${key}` })).statusCode, 200);
  const read = await call(ctx.app, admin, 'GET', `${DISPLAYS}/${id}`);
  assert.equal(read.json().key, undefined);

  assertCode(await call(ctx.app, admin, 'POST', `${DISPLAYS}/${id}/key`), 428, 'version_required');
  const rotated = await call(ctx.app, admin, 'POST', `${DISPLAYS}/${id}/key`, undefined, ifMatch(1));
  assert.equal(rotated.statusCode, 200, rotated.body);
  const newKey = rotated.json().key as string;
  assert.notEqual(newKey, key);
  assert.equal(rotated.json().version, 2);
  assert.equal((await ctx.app.inject({ url: `/help/${key}` })).statusCode, 404);
  assert.equal((await ctx.app.inject({ url: `/help/${newKey}` })).statusCode, 200);
  assertField(await call(ctx.app, admin, 'GET', `${DISPLAYS}/${id}/qr?display_key=${key}`), 'display_key');

  const off = await call(ctx.app, admin, 'PATCH', `${DISPLAYS}/${id}`, { enabled: false, version: 2 });
  assert.equal(off.statusCode, 200, off.body);
  assert.equal((await ctx.app.inject({ url: `/help/${newKey}` })).statusCode, 404);

  for (const secret of [key, newKey]) await assertNowhere(ctx.app, ctx.db, w, admin, secret, [DISPLAYS, `${DISPLAYS}/${id}`]);
  const entries = await auditOf(ctx.db, w.organizationId, ['cfh_display.created', 'cfh_display.key_rotated', 'cfh_display.disabled']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.changes.key]),
    [
      ['cfh_display.created', undefined],
      ['cfh_display.key_rotated', { from: '[secret]', to: '[secret]' }],
      ['cfh_display.disabled', undefined],
    ],
  );
  assert.equal((await call(ctx.app, admin, 'DELETE', `${DISPLAYS}/${id}`, undefined, ifMatch(3))).statusCode, 204);
});

test("a display's options are options of its location (422 by field), and a location admin's displays are its stores'", async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  assertField(await call(ctx.app, token, 'POST', DISPLAYS, { location_id: w.locationId, name: 'E', option_ids: [w.other.optionId] }), 'option_ids[0]');
  assertField(await call(ctx.app, token, 'POST', DISPLAYS, { location_id: w.locationId, name: 'E', option_ids: [] }), 'option_ids');
  assertField(await call(ctx.app, token, 'POST', DISPLAYS, { location_id: w.locationId, name: 'E', option_ids: [w.optionId], key: 'short' }), 'key');
  const inA = await call(ctx.app, token, 'POST', DISPLAYS, { location_id: w.locationId, name: 'A', option_ids: [w.optionId] });
  assert.equal(inA.statusCode, 201, inA.body);
  const lou = await sessionOf(ctx.app, w.locationAdmin);
  assert.equal((await call(ctx.app, lou, 'GET', `${DISPLAYS}/${inA.json().id}`)).statusCode, 200);
  assertCode(await call(ctx.app, lou, 'POST', DISPLAYS, { location_id: w.locationB, name: 'B', option_ids: [w.optionId] }), 403, 'forbidden');
  assertCode(await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'GET', `${DISPLAYS}/${inA.json().id}`), 404, 'not_found');
  assertCode(
    await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'GET', `${DISPLAYS}/${inA.json().id}/qr?display_key=${inA.json().key}`),
    404,
    'not_found',
  );
  assertCode(await call(ctx.app, await sessionOf(ctx.app, w.staff), 'GET', `${DISPLAYS}/${inA.json().id}/qr?display_key=${inA.json().key}`), 403, 'forbidden');
});

test("getDisplayQr's SVG, drawn by Chromium and read by a QR decoder, is the display's page URL", { skip: skipWithoutChromium }, async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  const made = await call(ctx.app, token, 'POST', DISPLAYS, { location_id: w.locationId, name: 'Entrance', option_ids: [w.optionId] });
  const qr = await call(ctx.app, token, 'GET', `${DISPLAYS}/${made.json().id}/qr?display_key=${made.json().key}`);
  assert.equal(qr.statusCode, 200, qr.body);
  assert.match(String(qr.headers['content-type']), /^image\/svg\+xml/);
  const page = await (await browserContext(t)).newPage();
  const size = 400;
  // Drawn as a browser draws an image, then read back as pixels.
  const pixels = await page.evaluate<number[]>(`(async () => {
    const img = new Image();
    img.src = 'data:image/svg+xml;base64,' + btoa(${JSON.stringify(qr.body)});
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = ${size};
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0, ${size}, ${size});
    return Array.from(g.getImageData(0, 0, ${size}, ${size}).data);
  })()`);
  const decoded = (jsQR as unknown as typeof jsQR.default)(Uint8ClampedArray.from(pixels), size, size);
  assert.equal(decoded?.data, `http://storeops.test/help/${made.json().key}`);
});
