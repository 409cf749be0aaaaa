// Scan to complete (contract section 19): a request of a button with require_scan is completed by a
// person only after its code was scanned; a right code records the arrival (the `arrived` event, the
// status view's employee_has_arrived); a wrong one changes nothing; chat integrations (a token's C3)
// keep completing without it. In the app: Chromium's fake camera fed a video of the button's QR code
// (made here), decoded by the page; and a typed wrong code, refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import QRCode from 'qrcode';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, skipWithoutChromium as skip } from '../support/browser.ts';
import { fromPage, signInHttp } from '../support/people.ts';
import { phone, press, screenshot, signInWithPin, staffWorld, type StaffWorld } from './support.ts';

const card = (id: string) => `li.request[data-message-id="${id}"]`;

async function step(w: StaffWorld, cookie: Awaited<ReturnType<typeof signInHttp>>, messageId: string, what: string, payload: object = {}) {
  return w.ctx.app.inject({ method: 'POST', url: `/console/api/cfh/${messageId}/${what}`, headers: fromPage(cookie), payload });
}

const scan = (w: StaffWorld, cookie: Awaited<ReturnType<typeof signInHttp>>, messageId: string, code: string) =>
  w.ctx.app.inject({ method: 'POST', url: `/staff/api/cfh/${messageId}/scan`, headers: fromPage(cookie), payload: { code } });

test('a person completes a require_scan request only after a right scan; a wrong code changes nothing; a token’s C3 needs none', async (t) => {
  const w = await staffWorld(t, { requireScan: true });
  assert.match(w.scanCode ?? '', /^[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{6}$/, 'the apply shows the new code');
  const [stored] = await w.ctx.db.query<{ scan_code_hash: string }>('SELECT scan_code_hash FROM call_buttons WHERE id = $1', [w.buttonId]);
  assert.ok(stored !== undefined && stored.scan_code_hash !== (w.scanCode as string) && /^[0-9a-f]{64}$/.test(stored.scan_code_hash), 'kept as a digest');
  const bob = await signInHttp(w.ctx.app, w.bob);
  const messageId = await press(w);
  assert.equal((await step(w, bob, messageId, 'claim')).json<{ success: boolean }>().success, true);

  const early = await step(w, bob, messageId, 'complete', { outcome: 'helped' });
  assert.equal(early.statusCode, 409, early.body);
  assert.equal(early.json<{ code: string }>().code, 'scan_required');

  const wrong = await scan(w, bob, messageId, 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZZ');
  assert.equal(wrong.statusCode, 422, wrong.body);
  assert.deepEqual(Object.keys(wrong.json<{ errors: object }>().errors), ['code']);
  const notACode = await scan(w, bob, messageId, 'hello');
  assert.equal(notACode.statusCode, 422);
  const [before] = await w.ctx.db.query<{ employee_arrived_at: string | null }>('SELECT employee_arrived_at FROM cfh_requests WHERE message_id = $1', [
    messageId,
  ]);
  assert.equal(before?.employee_arrived_at, null);

  // Typed in lower case, with spaces instead of dashes: the same code.
  const typed = (w.scanCode as string).toLowerCase().replace(/-/g, ' ');
  const right = await scan(w, bob, messageId, typed);
  assert.equal(right.statusCode, 200, right.body);
  assert.equal(right.json<{ employee_has_arrived: boolean }>().employee_has_arrived, true);
  const view = await w.ctx.app.inject({ method: 'GET', url: `/api/callforhelp/v1/tracking?message_id=${messageId}` });
  const seen = view.json<{ cfh_request: { employee_has_arrived: boolean; employee_arrived_at: string | null } }>().cfh_request;
  assert.equal(seen.employee_has_arrived, true);
  assert.equal(seen.employee_arrived_at, right.json<{ employee_arrived_at: string }>().employee_arrived_at);
  const events = await w.ctx.db.query<{ status: string }>("SELECT status FROM events WHERE type = 'callforhelp' AND details->>'message_id' = $1 ORDER BY id", [
    messageId,
  ]);
  assert.deepEqual(
    events.map((e) => e.status),
    ['created', 'claimed', 'arrived'],
  );
  const done = await step(w, bob, messageId, 'complete', { outcome: 'helped' });
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json<{ success: boolean }>().success, true);
  const closed = await scan(w, bob, messageId, w.scanCode as string);
  assert.equal(closed.statusCode, 409);

  // A chat integration cannot scan: its C3 completes as before.
  const second = await w.ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const other = second.json<{ message_id: string }>().message_id;
  // A C0 request has no button: its option needs the scan now.
  await w.ctx.db.query('UPDATE cfh_options SET require_scan = true WHERE id = $1', [w.optionId]);
  const who = { message_id: other, claimed_by: 'Chat User', claimed_by_user_id: 'u-1', channel_id: 'c-1' };
  const api = (p: string, body: object) =>
    w.ctx.app.inject({ method: 'POST', url: `/api/callforhelp/${p}`, headers: { authorization: `Bearer ${w.token}` }, payload: body });
  assert.equal((await api('claim', who)).statusCode, 200);
  const chat = await api('complete', { ...who, customer_status: 'helped' });
  assert.equal(chat.statusCode, 200, chat.body);
  assert.equal(chat.json<{ success: boolean }>().success, true);
});

test('a request that needs no scan refuses one, and a request of another organization is not found', async (t) => {
  const w = await staffWorld(t);
  const bob = await signInHttp(w.ctx.app, w.bob);
  const messageId = await press(w);
  const res = await scan(w, bob, messageId, 'ABCDE-FGHJK-MNPQR-STVWX-YZ0123');
  assert.equal(res.statusCode, 409);
  assert.equal(res.json<{ code: string }>().code, 'scan_not_required');
  const other = await staffWorld(t);
  const outsider = await signInHttp(other.ctx.app, other.bob);
  const foreign = await other.ctx.app.inject({
    method: 'POST',
    url: `/staff/api/cfh/${messageId}/scan`,
    headers: fromPage(outsider),
    payload: { code: 'ABCDE-FGHJK-MNPQR-STVWX-YZ0123' },
  });
  assert.equal(foreign.statusCode, 404);
  const noCsrf = await w.ctx.app.inject({ method: 'POST', url: `/staff/api/cfh/${messageId}/scan`, headers: { cookie: bob.cookie }, payload: { code: 'x' } });
  assert.equal(noCsrf.statusCode, 403);
});

/** A y4m video (4:2:0) of a QR code of `text`, black on white, for Chromium's fake camera. */
function qrVideo(text: string, file: string): void {
  const width = 640;
  const height = 480;
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const size = qr.modules.size;
  const scale = Math.floor(400 / (size + 8));
  const left = Math.floor((width - size * scale) / 2);
  const topEdge = Math.floor((height - size * scale) / 2);
  const y = Buffer.alloc(width * height, 235);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (!qr.modules.get(row, col)) continue;
      for (let dy = 0; dy < scale; dy++)
        y.fill(16, (topEdge + row * scale + dy) * width + left + col * scale, (topEdge + row * scale + dy) * width + left + (col + 1) * scale);
    }
  }
  const chroma = Buffer.alloc((width / 2) * (height / 2) * 2, 128);
  const frame = Buffer.concat([Buffer.from('FRAME\n'), y, chroma]);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(`YUV4MPEG2 W${width} H${height} F10:1 Ip A1:1 C420jpeg\n`), ...Array.from({ length: 10 }, () => frame)]));
}

test('the app scans the button’s QR code with the camera, marks the associate arrived, then completes', { skip }, async (t) => {
  const w = await staffWorld(t, { requireScan: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-scan-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const video = path.join(dir, 'qr.y4m');
  qrVideo(w.scanCode as string, video);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-video-capture=${video}`,
    ],
  });
  t.after(() => browser.close());
  const { context, page } = await phone(t, w, { handheld: true, browser });
  await context.grantPermissions(['camera'], { origin: w.base });
  await page.goto(`${w.base}/staff`);
  await signInWithPin(page, w.ann);
  await page.locator('body.live').waitFor();
  const messageId = await press(w);
  const shown = page.locator(card(messageId));
  await shown.getByRole('button', { name: 'Claim' }).tap();
  const scan = shown.getByRole('button', { name: 'Scan to complete' });
  await scan.waitFor();
  assert.equal(await shown.getByRole('button', { name: 'Complete', exact: true }).count(), 0, 'no Complete before the scan');
  await scan.tap();
  await page.locator('dialog.scanner video').waitFor();
  await screenshot(page, 'scan');
  await shown.getByText('Scanned: you are there').waitFor({ timeout: 15_000 });
  const decoderLoaded = await page.evaluate<boolean>(
    "[...document.scripts].some((s) => s.src.endsWith('/staff/assets/jsqr.js')) || 'BarcodeDetector' in window",
  );
  assert.ok(decoderLoaded, 'decoded in the browser');
  await shown.getByRole('button', { name: 'Complete', exact: true }).tap();
  await page.getByLabel('Outcome').selectOption('helped');
  await page.locator('[data-step=confirm-complete]').tap();
  await shown.waitFor({ state: 'detached' });
  const [row] = await w.ctx.db.query<{ employee_arrived_at: string | null; is_completed: boolean }>(
    'SELECT employee_arrived_at, is_completed FROM cfh_requests WHERE message_id = $1',
    [messageId],
  );
  assert.ok(row?.employee_arrived_at !== null && row?.is_completed === true, JSON.stringify(row));
});

test('a typed code that is not the request’s is refused in words and changes nothing', { skip }, async (t) => {
  const w = await staffWorld(t, { requireScan: true });
  const { page } = await phone(t, w, { handheld: true });
  await page.goto(`${w.base}/staff`);
  await signInWithPin(page, w.ann);
  const messageId = await press(w);
  const shown = page.locator(card(messageId));
  await shown.getByRole('button', { name: 'Claim' }).tap();
  await shown.getByRole('button', { name: 'Scan to complete' }).tap();
  await page.getByLabel('Code').fill('ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZZ');
  await page.getByRole('button', { name: 'Check the code' }).tap();
  await page.locator('#scan-message', { hasText: 'That is not the code of this request. Nothing changed.' }).waitFor();
  await page.getByLabel('Code').fill(w.scanCode as string);
  await page.getByRole('button', { name: 'Check the code' }).tap();
  await shown.getByText('Scanned: you are there').waitFor();
});
