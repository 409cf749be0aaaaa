// The staff app tests' fixtures: a store with a call button (and its hub's token), outcomes, an
// enrolled store device, an associate with a PIN and another with a password, and phones: Chromium
// contexts emulating a 390x844 touch phone, the device's cookie in the shared handheld's jar.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { testBrowser } from '../support/browser.ts';
import { makePerson, signInHttp, type TestPerson } from '../support/people.ts';
import { enroll } from '../support/store-devices.ts';
import { freshId, provisionToken, testApp, type TestContext, type Teardown } from '../support/world.ts';
import { consoleWorld, type ConsoleWorld } from '../console/support.ts';

export const PIN = '246810';

export interface StaffWorld extends ConsoleWorld {
  ctx: TestContext;
  base: string;
  buttonId: number;
  buttonKey: string;
  hubToken: string;
  /** `storeops_device=<value>` of the enrolled handheld. */
  deviceCookie: string;
  /** Ann, staff of the store, with a PIN. */
  ann: TestPerson;
  /** Bob, staff of the store, with a password. */
  bob: TestPerson;
  /** The button's scan code, when it was made with require_scan. */
  scanCode: string | null;
}

export async function staffWorld(t: Teardown, opts: { requireScan?: boolean; language?: 'en' | 'fr' } = {}): Promise<StaffWorld> {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const buttonId = freshId();
  const buttonKey = `AA:BB:CC:${String(buttonId % 100).padStart(2, '0')}:EE:01`;
  const applied = await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, language: opts.language ?? 'en' }],
    cfh_outcomes: [
      { id: freshId(), location_id: w.locationId, key: 'helped', text_en: 'Customer helped', text_fr: 'Client aidé' },
      { id: freshId(), location_id: w.locationId, key: 'out_of_stock', text_en: 'Out of stock', text_fr: 'Rupture de stock' },
    ],
    call_buttons: [
      { id: buttonId, location_id: w.locationId, name: 'Paint counter', device_key: buttonKey, option_id: w.optionId, require_scan: opts.requireScan ?? false },
    ],
  });
  const hubToken = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['buttons']);
  const admin = await signInHttp(ctx.app, w.admin);
  const device = await enroll(ctx.app, admin, w.locationId, 'Floor handheld 1');
  const ann = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Ann Lee', role: 'staff', locationIds: [w.locationId], pin: PIN });
  const bob = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Bob Roy', role: 'staff', locationIds: [w.locationId] });
  return {
    ...w,
    ctx,
    base,
    buttonId,
    buttonKey,
    hubToken,
    deviceCookie: device.cookie,
    ann,
    bob,
    scanCode: applied.scan_codes?.find((c) => c.kind === 'call_button' && c.id === buttonId)?.scan_code ?? null,
  };
}

/** B1: a press of the world's button; its message_id. */
export async function press(w: StaffWorld): Promise<string> {
  const res = await w.ctx.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: `Bearer ${w.hubToken}` },
    payload: { device_key: w.buttonKey },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
}

/** A C0 request of the world's option (no cooldown, unlike a button). */
export async function request(w: StaffWorld): Promise<string> {
  const res = await w.ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ message_id: string }>().message_id;
}

export const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 } as const;

/** A phone: its own context (cookies, storage), the store device's cookie when `handheld`. */
export async function phone(
  t: Teardown,
  w: StaffWorld,
  opts: { handheld?: boolean; browser?: Browser; width?: number; locale?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const browser = opts.browser ?? (await testBrowser());
  const context = await browser.newContext({ ...PHONE, viewport: { width: opts.width ?? 390, height: 844 }, locale: opts.locale ?? 'en-US' });
  t.after(() => context.close());
  if (opts.handheld ?? false) {
    const [name, value] = w.deviceCookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: w.base, httpOnly: true, sameSite: 'Strict' }]);
  }
  return { context, page: await context.newPage() };
}

/** Signs in with email and PIN on the handheld's sign-in page. */
export async function signInWithPin(page: Page, person: TestPerson, pin = PIN): Promise<void> {
  await page.locator('#pin-email').fill(person.email);
  await page.locator('#pin').fill(pin);
  await page.getByRole('button', { name: 'Sign in with PIN' }).click();
}

/** Signs in with email and password (a personal phone). */
export async function signInWithPassword(page: Page, person: TestPerson): Promise<void> {
  await page.locator('#email').fill(person.email);
  await page.locator('#password').fill(person.password);
  await page.locator('#password-form button[type=submit]').click();
}

/** The page's width against the screen's: no sideways scrolling. */
export async function fits(page: Page): Promise<{ page: number; screen: number }> {
  return page.evaluate<{ page: number; screen: number }>('({ page: document.documentElement.scrollWidth, screen: innerWidth })');
}

const SHOTS = path.resolve(import.meta.dirname, '..', '..', 'docs', 'images');

/** A picture for docs/staff-app.md, written only with UPDATE_SCREENSHOTS=1 (so a test run leaves the tree clean). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `staff-${name}.png`) });
}
