// The customer's pages on a phone: they name the store (never the display's staff-facing name),
// speak the browser's language when it is English or French (fr-CA is French), else the store's,
// and switch between English and French in one tap, on the display's page and the tracking page.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { makeCfhWorld } from './support.ts';

const PHONE = { width: 390, height: 844 };

let ctx: TestContext;
let base: string;
before(async () => {
  ctx = await testApp();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});

async function phone(t: Parameters<typeof browserContext>[0], locale: string): Promise<Page> {
  return (await browserContext(t, { viewport: PHONE, locale })).newPage();
}

test("the display's page names the store, not the display, and a fr-CA phone gets French in an English store", { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { displayName: 'Entrance QR' });
  const page = await phone(t, 'fr-CA');
  await page.goto(`${base}/help/${w.displayKey}`);
  assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
  assert.equal(await page.locator('h1').textContent(), `Store ${w.locationId}`);
  assert.equal(await page.getByText('Entrance QR').count(), 0, "the display's staff-facing name is not shown");
  assert.equal(await page.title(), `Store ${w.locationId}`);
  await page.getByRole('button', { name: 'Aide' }).waitFor();
});

test("a phone in neither language gets the store's; English and French phones get their own", { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { language: 'fr' } });
  for (const [locale, lang] of [
    ['es-MX', 'fr'],
    ['en-US', 'en'],
    ['fr-FR', 'fr'],
  ] as const) {
    const page = await phone(t, locale);
    await page.goto(`${base}/help/${w.displayKey}`);
    assert.equal(await page.locator('html').getAttribute('lang'), lang, locale);
  }
});

test('one tap switches between English and French on the display page and on the tracking page', { skip }, async (t) => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const page = await phone(t, 'en-US');
  await page.goto(`${base}/help/${w.displayKey}`);
  await page.getByRole('link', { name: 'Français' }).click();
  await page.getByRole('button', { name: 'Aide' }).waitFor();
  assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
  await page.getByRole('button', { name: 'Aide' }).click();
  await page.waitForURL(/\/help\/t\//);
  await page.locator('#state').filter({ hasText: 'reçue' }).waitFor();
  assert.equal(await page.locator('h1').textContent(), `Store ${w.locationId}`);
  await page.getByRole('link', { name: 'English' }).click();
  await page.locator('#state').filter({ hasText: 'received' }).waitFor();
  assert.equal(await page.locator('html').getAttribute('lang'), 'en');
  const width = await page.evaluate<number[]>('[document.documentElement.scrollWidth, innerWidth]');
  assert.ok(width[0]! <= width[1]!, `fits the phone: ${width.join(' > ')}`);
});
