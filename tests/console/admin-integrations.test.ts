// The console's integrations in Chromium: a webhook endpoint added on the Webhooks page (its secret
// shown once) and sent a test whose answer the page shows, as a real receiver got it, signed with
// that secret; a radio edge device added in Setup with its key shown once and a new one on demand;
// a messaging account whose auth token is written and never shown.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { closeWith, testConfig } from '../support/world.ts';
import { callFromPage, openSetup, serving, signedInPage } from './admin-support.ts';

test('an endpoint added on the Webhooks page shows its secret once, and "Send a test" shows what the receiver answered', { skip }, async (t) => {
  const s = await serving(t, { config: testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }) });
  const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks, got it');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  closeWith(t, () => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const page = await signedInPage(t, s.base, s.w.admin);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('button', { name: 'Add an endpoint' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
  await dialog.getByLabel('URL').fill(hookUrl);
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const shown = page.getByRole('dialog', { name: 'The endpoint’s secret' });
  const secret = await shown.getByLabel('Signing secret').inputValue();
  assert.ok(secret.length >= 16, secret);
  await shown.getByRole('button', { name: 'Done, I have kept it' }).click();

  await page.getByRole('heading', { name: hookUrl }).waitFor();
  await page.getByRole('button', { name: `Send a test to ${hookUrl}` }).click();
  const answer = page.getByRole('dialog', { name: 'Test sent' });
  await answer.getByText(/The receiver answered 200 in \d+ ms\. It said: thanks, got it/).waitFor();
  await answer.getByRole('button', { name: 'OK' }).click();
  assert.equal(got.length, 1);
  const sent = got[0] as { headers: http.IncomingHttpHeaders; body: string };
  const signature = crypto.createHmac('sha256', secret).update(`${sent.headers['x-timestamp']}${sent.body}`).digest('hex');
  assert.equal(sent.headers['x-signature'], signature, 'signed with the secret shown once');
  assert.doesNotMatch((await callFromPage(page, 'GET', '/api/admin/webhooks')).text, new RegExp(secret));
});

test('a radio edge device added in Setup shows its key once and gets a new one on demand; a messaging account’s token is never shown', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'equipment', 'Radio edge devices');
  await page.getByRole('button', { name: 'Add a radio edge device' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a radio edge device' });
  await dialog.getByLabel('Edge id').fill('aisle-radio');
  await dialog.getByLabel('Name', { exact: true }).fill('Aisle radio');
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const shown = page.getByRole('dialog', { name: 'The key of Aisle radio' });
  const key = await shown.getByLabel('Device key').inputValue();
  await shown.getByRole('button', { name: 'Done, I have kept it' }).click();
  const play = (k: string) =>
    s.app.inject({
      method: 'POST',
      url: '/webhooks/incoming/generic',
      headers: { 'api-key': k },
      payload: { edgeId: 'aisle-radio', text: 'Hello', actor: 'test' },
    });
  assert.equal((await play(key)).statusCode, 200);

  const row = page.locator('#section-radio-edges tr', { hasText: 'Aisle radio' });
  await row.getByRole('button', { name: 'New key for Aisle radio' }).click();
  await page.getByRole('dialog', { name: 'A new key for Aisle radio?' }).getByRole('button', { name: 'Make a new key' }).click();
  const again = page.getByRole('dialog', { name: 'The key of Aisle radio' });
  const rotated = await again.getByLabel('Device key').inputValue();
  await again.getByRole('button', { name: 'Done, I have kept it' }).click();
  assert.notEqual(rotated, key);
  assert.equal((await play(key)).statusCode, 403, 'the old key is refused');
  assert.equal((await play(rotated)).statusCode, 200);

  await openSetup(page, s.base, s.w.locationId, 'messaging', 'Messaging accounts');
  await page.getByRole('button', { name: 'Add a messaging account' }).click();
  const account = page.getByRole('dialog', { name: 'Add a messaging account' });
  const sid = `AC${crypto.randomBytes(16).toString('hex')}`;
  const token = crypto.randomBytes(20).toString('hex');
  await account.getByLabel('Account SID').fill(sid);
  await account.getByLabel('Auth token').fill(token);
  await account.getByRole('button', { name: 'Add', exact: true }).click();
  await page.locator('#section-messaging tr', { hasText: sid }).waitFor();
  assert.doesNotMatch((await page.locator('#section-messaging').textContent()) ?? '', new RegExp(token));
  assert.doesNotMatch((await callFromPage(page, 'GET', '/api/admin/messaging_accounts')).text, new RegExp(token));
});
