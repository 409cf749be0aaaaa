// The customer pages in a real browser (Chromium): a display's options, the request it makes, the
// tracking page that follows the request live (C6) and cancels it (C4); every stored text escaped.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { before, test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, makeCfhWorld, success } from './support.ts';

let ctx: TestContext;
let base: string;
before(async () => {
  ctx = await testApp();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});

test('choose an option, see "received", and see the claimer\'s name appear without a reload', { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { staff_name_format: 'first' } });
  const page = await (await browserContext(t)).newPage();
  await page.goto(`${base}/help/${w.displayKey}`);
  assert.equal(await page.locator('h1').textContent(), `Store ${w.locationId}`);
  await page.getByRole('button', { name: 'Paint' }).click();
  await page.waitForURL(/\/help\/t\//);
  const state = page.locator('#state');
  await state.filter({ hasText: 'received' }).waitFor();
  const messageId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
  const record = (await cfhClient(ctx.app, w.token).track(messageId)).json();
  assert.deepEqual([record.option.id, record.cfh_request.source], [w.secondOptionId, 'display']);

  let loads = 0;
  page.on('load', () => loads++);
  assert.equal(success(await cfhClient(ctx.app, w.token).claim(messageId, { ...ann, claimed_by: 'Ann Smith' })), true);
  await state.filter({ hasText: 'Ann is taking care of your request.' }).waitFor();
  assert.equal(loads, 0, 'no reload');
  assert.equal(await state.getAttribute('data-status'), 'claimed');
});

test('two phones on one network each get their request; asking again from one leads back to its request', { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const messageIdOf = (url: string) => decodeURIComponent(new URL(url).pathname.split('/').at(-1) ?? '');
  const ask = async (page: Page) => {
    await page.goto(`${base}/help/${w.displayKey}`);
    await page.getByRole('button', { name: 'Paint' }).click();
    await page.waitForURL(/\/help\/t\//);
    return messageIdOf(page.url());
  };
  const first = await (await browserContext(t)).newPage();
  const second = await (await browserContext(t)).newPage();
  const mine = await ask(first);
  const theirs = await ask(second);
  assert.notEqual(mine, theirs, 'the second phone (same address, its own browser) got its own request');
  assert.equal(await ask(first), mine, 'the first phone, asking again while its request is open, is led back to it');
  const [{ n }] = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE display_id = $1', [w.displayId])) as [{ n: number }];
  assert.equal(n, 2);
});

test('the tracking page cancels the request; the French page speaks French', { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { language: 'fr' } });
  const page = await (await browserContext(t, { locale: 'fr-CA' })).newPage();
  await page.goto(`${base}/help/${w.displayKey}`);
  assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
  await page.getByRole('button', { name: 'Aide' }).click();
  await page.waitForURL(/\/help\/t\//);
  await page.locator('#state').filter({ hasText: 'reçue' }).waitFor();
  await page.getByRole('button', { name: 'Annuler ma demande' }).click();
  await page.locator('#state').filter({ hasText: 'annulée' }).waitFor();
  const messageId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
  assert.equal((await cfhClient(ctx.app, w.token).track(messageId)).json().cfh_request.status, 'cancelled');
  assert.equal(await page.locator('#cancel').isHidden(), true);
});

test('free text goes through the profanity filter; a refused text creates nothing', { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const page = await (await browserContext(t)).newPage();
  await page.goto(`${base}/help/${w.displayKey}`);
  await page.locator('#text').fill('this is shit');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('#error').filter({ hasText: 'cannot be sent' }).waitFor();
  assert.equal((await ctx.db.query('SELECT 1 FROM cfh_requests WHERE display_id = $1', [w.displayId])).length, 0);
  await page.locator('#text').fill('Where are the ladders?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/\/help\/t\//);
  assert.equal(await page.locator('p').first().textContent(), 'Where are the ladders?');
});

test('stored text is escaped: a store name and option text with <script> render as text', async () => {
  const hostile = '<script>window.pwned=1</script><b>x</b>';
  const w = await makeCfhWorld(ctx.db, ctx.clock, { optionText: `"'><img src=x onerror=alert(1)>` });
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id: w.locationId, organization_id: w.organizationId, name: hostile }] });
  const res = await ctx.app.inject({ url: `/help/${w.displayKey}` });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.ok(!res.body.includes('<script>window.pwned'), 'the name is escaped');
  assert.ok(!res.body.includes('<img src=x'), 'the option text is escaped');
  assert.ok(res.body.includes('&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;'));
  assert.match(res.headers['content-security-policy'] as string, /script-src 'nonce-/);
});

test('an unknown display key or message_id is a 404 page', async () => {
  for (const url of ['/help/nobody-has-this-display-key-000', '/help/t/no-such-request', '/help/%3Cscript%3E']) {
    const res = await ctx.app.inject({ url });
    assert.equal(res.statusCode, 404, url);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.ok(!res.body.includes('<script>'), `${url}: a script tag only with its nonce`);
    assert.ok(!res.body.includes('<script>"') && !/<script>[^<]*<\/script>/.test(res.body.replace(/<script nonce="[^"]*">/g, '')), url);
  }
  // A NUL in the path is refused cleanly, never a 500 (found in review).
  for (const url of ['/help/t/%00', '/help/t/a%00b']) {
    const res = await ctx.app.inject({ url });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
  }
});
