// The console's sign-in page in a real browser (contract section 17): email and password with its
// refusals in words, a one-time password changed at the first sign-in, single sign-on's button when
// it is configured (and password sign-in for administrators only), going to a real provider and back
// to the page asked for, and on an enrolled store device a badge typed by a scanner, email and PIN,
// their refusals, and "Switch user" back to them.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { Config } from '../../src/config.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freePort } from '../../scripts/lib/free-port.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { startOidcProvider } from '../support/oidc-provider.ts';
import { freshId, testApp, testConfig, type Teardown } from '../support/world.ts';
import { consoleWorld, makePerson, signInHttp, signInPage } from './support.ts';

const TABLET = { width: 820, height: 1180 };

async function serving(t: Teardown, config?: Config) {
  const ctx = await testApp({ t, ...(config === undefined ? {} : { config }) });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  return { ...ctx, w, base: `http://127.0.0.1:${port}` };
}

type Served = Awaited<ReturnType<typeof serving>>;

/** Makes the browser an enrolled store device of the world's store, as enrollStoreDevice would:
 * a store_devices row with the cookie's digest, and the cookie in the browser. */
async function enroll(s: Served, context: BrowserContext): Promise<number> {
  const value = crypto.randomBytes(32).toString('base64url');
  const [row] = await s.db.query<{ id: number }>(
    `INSERT INTO store_devices (organization_id, location_id, name, device_hash, created_at) VALUES ($1, $2, 'Front desk tablet', $3, $4) RETURNING id`,
    [s.w.organizationId, s.w.locationId, sha256hex(value), s.clock.now()],
  );
  await context.addCookies([{ name: 'storeops_device', value, url: s.base, httpOnly: true, sameSite: 'Lax' }]);
  assert.ok(row !== undefined);
  return row.id;
}

const focused = async (page: Page) => String(await page.evaluate('document.activeElement?.id'));

/** Waits until the field is empty again (the page clears a refused PIN or badge). */
async function cleared(field: Locator): Promise<void> {
  for (let i = 0; i < 100 && (await field.inputValue()) !== ''; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await field.inputValue(), '');
}

const signedInAs = async (page: Page) => (await page.locator('#signed-in-as').textContent()) ?? '';

test('signed out, the console learns only how one signs in here: single sign-on, passwords, and this store device', async (t) => {
  const ctx = await testApp({ t, config: testConfig({ OIDC_ISSUER: 'http://127.0.0.1:9/x', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' }) });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const ask = async (cookie?: string) =>
    (await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: cookie === undefined ? {} : { cookie } })).json<Record<string, unknown>>();
  const sso = { name: 'single sign-on', host: '127.0.0.1:9' };
  assert.deepEqual(await ask(), { signed_in: false, sign_in: { sso, password: { admins_only: true }, store_device: null } });
  const value = crypto.randomBytes(32).toString('base64url');
  const [row] = await ctx.db.query<{ id: number }>(
    `INSERT INTO store_devices (organization_id, location_id, name, device_hash, created_at) VALUES ($1, $2, 'Till 2', $3, $4) RETURNING id`,
    [w.organizationId, w.locationId, sha256hex(value), ctx.clock.now()],
  );
  const device = { id: row?.id, location_id: w.locationId, location_name: `Store ${w.locationId}` };
  assert.deepEqual(await ask(`storeops_device=${value}`), { signed_in: false, sign_in: { sso, password: { admins_only: true }, store_device: device } });
  const signedIn = await ask(`storeops_device=${value}; ${(await signInHttp(ctx.app, w.admin)).cookie}`);
  assert.deepEqual([signedIn.signed_in, signedIn.store_device, signedIn.sign_in], [true, device, undefined]);

  const plain = await testApp({ t, config: testConfig({ PASSWORD_SIGN_IN: 'on' }) });
  const answer = (await plain.app.inject({ method: 'GET', url: '/console/api/session' })).json<Record<string, unknown>>();
  assert.deepEqual(answer, { signed_in: false, sign_in: { sso: null, password: { admins_only: false }, store_device: null } });
});

test('email and password: refusals in words, then the name and role at the shown store, following the store select', { skip }, async (t) => {
  const s = await serving(t);
  const other = freshId();
  await applyProvisioning(s.db, s.clock, { locations: [{ id: other, organization_id: s.w.organizationId, name: 'Harbour store' }] });
  const robin = await makePerson(s.db, s.clock, s.w.organizationId, {
    name: 'Robin',
    role: 'location_admin',
    locationIds: [s.w.locationId],
    more: [{ role: 'staff', locationIds: [other] }],
  });
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await page.goto(`${s.base}/console`);
  await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
  assert.equal(await page.locator('#badge-form, #pin-form, #sso').count(), 0, 'no badge, PIN or single sign-on off a store device without OIDC');
  assert.equal(await focused(page), 'email', 'the email field has the focus');

  await signInPage(page, { email: robin.email, password: 'not-the-password-at-all' });
  const error = page.getByRole('alert').filter({ hasText: 'That email and password do not match an account here.' });
  await error.waitFor();
  assert.equal(await page.getByLabel('Password').inputValue(), '', 'the wrong password is cleared');

  await signInPage(page, robin);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.getByLabel('Store').selectOption({ label: `Store ${s.w.locationId}` });
  await page.locator('#signed-in-as', { hasText: /^Robin · store admin$/ }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Reports' }).count(), 1, 'an admin there: reports');
  // With the keyboard: the select keeps the focus while the header is drawn again.
  const stores = await page.getByLabel('Store').locator('option').allTextContents();
  await page.getByLabel('Store').focus();
  await page.keyboard.press(stores.indexOf('Harbour store') > stores.indexOf(`Store ${s.w.locationId}`) ? 'ArrowDown' : 'ArrowUp');
  await page.locator('#signed-in-as', { hasText: /^Robin · staff$/ }).waitFor();
  assert.equal(await focused(page), 'location', 'the store select keeps the focus');
  assert.equal(await page.getByRole('link', { name: 'Reports' }).count(), 0, 'staff there: no reports');
});

test('a one-time password: sign in, choose a new one (a wrong one-time password is refused), land on the console', { skip }, async (t) => {
  const s = await serving(t);
  const kim = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Kim', role: 'staff', locationIds: [s.w.locationId] });
  await s.db.query('UPDATE people SET must_change_password = true WHERE id = $1', [kim.id]);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await page.goto(`${s.base}/console`);
  await signInPage(page, kim);
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  const chosen = 'a long new password of mine';
  await page.getByLabel('One-time password').fill('not the one-time password');
  await page.getByLabel('New password').fill(chosen);
  await page.getByRole('button', { name: 'Save and continue' }).click();
  await page.getByRole('alert').filter({ hasText: 'The one-time password is not right.' }).waitFor();

  await page.getByLabel('One-time password').fill(kim.password);
  await page.getByRole('button', { name: 'Save and continue' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.equal(await signedInAs(page), 'Kim · staff');
  await page.getByText('No one is waiting for help.').waitFor();
  const [row] = await s.db.query<{ must_change_password: boolean }>('SELECT must_change_password FROM people WHERE id = $1', [kim.id]);
  assert.equal(row?.must_change_password, false);
  const again = await fetch(`${s.base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: kim.email, password: chosen }),
  });
  assert.equal(again.status, 200);
});

/** Lee, staff with a badge and a PIN, at the sign-in page of an enrolled store device of the store. */
async function leeAtTheDevice(t: Teardown) {
  const s = await serving(t);
  const lee = await makePerson(s.db, s.clock, s.w.organizationId, {
    name: 'Lee',
    role: 'staff',
    locationIds: [s.w.locationId],
    badge: 'BADGE-0042',
    pin: '482915',
  });
  const context = await browserContext(t, { viewport: TABLET });
  const deviceId = await enroll(s, context);
  const page = await context.newPage();
  await page.goto(`${s.base}/console`);
  return { s, lee, deviceId, page };
}

test('on an enrolled store device: a scanned badge signs in, "Switch user" returns to the badge, a PIN signs in', { skip }, async (t) => {
  const { s, lee, deviceId, page } = await leeAtTheDevice(t);
  await page.getByRole('heading', { name: `Sign in at Store ${s.w.locationId}` }).waitFor();
  // A scanner types into the focused field and presses Enter.
  assert.equal(await focused(page), 'badge');
  await page.keyboard.type('BADGE-0042');
  await page.keyboard.press('Enter');
  const switchUser = page.getByRole('button', { name: 'Switch user' });
  await switchUser.waitFor();
  assert.equal(await signedInAs(page), 'Lee · staff');
  assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0, 'on a shared device, "Switch user" is the way out');
  const [session] = await s.db.query<{ method: string; store_device_id: number }>(
    'SELECT method, store_device_id FROM sessions WHERE person_id = $1 AND ended_at IS NULL',
    [lee.id],
  );
  assert.deepEqual(session, { method: 'badge', store_device_id: deviceId });

  await switchUser.click();
  await page.getByText('You are signed out. The next person can sign in.').waitFor();
  await page.getByLabel('Badge code').waitFor();
  const [ended] = await s.db.query<{ open: number }>('SELECT count(*)::int AS open FROM sessions WHERE person_id = $1 AND ended_at IS NULL', [lee.id]);
  assert.equal(ended?.open, 0);
  const [device] = await s.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM store_devices WHERE id = $1', [deviceId]);
  assert.equal(device?.revoked_at, null, 'the device stays enrolled');

  const pinForm = page.getByRole('form', { name: 'Email and PIN' });
  await pinForm.getByLabel('Email').fill(lee.email);
  await pinForm.getByLabel('PIN').fill('482915');
  await pinForm.getByRole('button', { name: 'Sign in with PIN' }).click();
  await switchUser.waitFor();
  assert.equal(await signedInAs(page), 'Lee · staff');
});

test('on an enrolled store device: a wrong badge or PIN, too many wrong PINs, and a device revoked meanwhile, in words', { skip }, async (t) => {
  const { s, lee, deviceId, page } = await leeAtTheDevice(t);
  const badgeForm = page.getByRole('form', { name: 'Badge' });
  await badgeForm.getByLabel('Badge code').fill('BADGE-9999');
  await badgeForm.getByLabel('Badge code').press('Enter');
  await badgeForm.getByRole('alert').filter({ hasText: 'That badge or PIN is not right for this store.' }).waitFor();
  assert.equal(await badgeForm.getByLabel('Badge code').inputValue(), '', 'ready for the next scan');

  const pinForm = page.getByRole('form', { name: 'Email and PIN' });
  const alert = pinForm.getByRole('alert');
  await pinForm.getByLabel('Email').fill(lee.email);
  for (let i = 0; i < 5; i++) {
    await pinForm.getByLabel('PIN').fill('000000');
    await pinForm.getByRole('button', { name: 'Sign in with PIN' }).click();
    await cleared(pinForm.getByLabel('PIN'));
    assert.equal(await alert.textContent(), 'That badge or PIN is not right for this store.');
  }
  await pinForm.getByLabel('PIN').fill('482915');
  await pinForm.getByRole('button', { name: 'Sign in with PIN' }).click();
  await alert.filter({ hasText: 'Too many wrong PINs on this device. Try again in 15 minutes.' }).waitFor();

  await s.db.query('UPDATE store_devices SET revoked_at = $2 WHERE id = $1', [deviceId, s.clock.now()]);
  await badgeForm.getByLabel('Badge code').fill('BADGE-0042');
  await badgeForm.getByLabel('Badge code').press('Enter');
  await badgeForm.getByRole('alert').filter({ hasText: "Badge and PIN sign-in work only on this store's shared devices." }).waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
  assert.equal(await page.locator('#badge-form, #pin-form').count(), 0, 'a revoked device offers no badge or PIN');
});

test('with single sign-on configured: its button goes to the provider with the page to come back to; passwords are for administrators', { skip }, async (t) => {
  const s = await serving(t, testConfig({ OIDC_ISSUER: 'http://127.0.0.1:9/x', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' }));
  const staff = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Ash', role: 'staff', locationIds: [s.w.locationId] });
  const page = await (await browserContext(t)).newPage();
  await page.goto(`${s.base}/console#/lockers/${s.w.locationId}`);
  const sso = page.getByRole('link', { name: 'Sign in with single sign-on' });
  await sso.waitFor();
  assert.equal(await sso.getAttribute('href'), `/auth/oidc/start?return_to=%2Fconsole%23%2Flockers%2F${s.w.locationId}`);
  await page.getByText('You sign in at 127.0.0.1:9, then come back here.').waitFor();
  const form = page.getByRole('form', { name: 'Your account' });
  await form.getByText('For administrators only, when single sign-on is not available.').waitFor();

  await signInPage(page, staff);
  await form.getByRole('alert').filter({ hasText: 'Password sign-in here is for administrators only. Use single sign-on.' }).waitFor();
  await signInPage(page, s.w.admin);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.equal(await signedInAs(page), 'Sam · organization admin');
  assert.match(page.url(), new RegExp(`#/lockers/${s.w.locationId}$`));
});

test("the single sign-on button: the provider's pages, then back signed in on the page that was asked for", { skip }, async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const client = { clientId: 'storeops', clientSecret: 'storeops-test-secret', redirectUris: [`${base}/auth/oidc/callback`] };
  const provider = await startOidcProvider(t, { clients: [client] });
  const config = testConfig({ PUBLIC_BASE_URL: base, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: client.clientId, OIDC_CLIENT_SECRET: client.clientSecret });
  const ctx = await testApp({ t, config });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  const w = await consoleWorld(ctx.db, ctx.clock);
  await applyProvisioning(ctx.db, ctx.clock, {
    sso_role_mappings: [{ claim_value: `floor-${w.locationId}`, organization_id: w.organizationId, role: 'staff', location_ids: [w.locationId] }],
  });
  const sub = `jo${freshId()}`;
  provider.accounts.set(sub, { sub, email: `${sub}@example.com`, email_verified: true, name: 'Jo Park', groups: [`floor-${w.locationId}`] });
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await page.goto(`${base}/console#/lockers/${w.locationId}`);
  await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill('whatever the dev page accepts');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.equal(new URL(page.url()).hash, `#/lockers/${w.locationId}`);
  assert.equal(await signedInAs(page), 'Jo Park · staff');
  await page.locator('section.page-lockers li.cabinet').first().waitFor();
});

test('an enrolled device with single sign-on: badge and PIN first, the other ways folded away', { skip }, async (t) => {
  const s = await serving(t, testConfig({ OIDC_ISSUER: 'http://127.0.0.1:9/x', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b', PASSWORD_SIGN_IN: 'on' }));
  const context = await browserContext(t, { viewport: { width: 390, height: 844 } });
  await enroll(s, context);
  const page = await context.newPage();
  await page.goto(`${s.base}/console`);
  await page.getByLabel('Badge code').waitFor();
  const sso = page.getByRole('link', { name: 'Sign in with single sign-on' });
  assert.equal(await sso.isVisible(), false);
  await page.getByText('Other ways to sign in').click();
  assert.equal(await sso.isVisible(), true);
  const form = page.getByRole('form', { name: 'Your account' });
  assert.equal(await form.getByText(/administrators only/).count(), 0, 'PASSWORD_SIGN_IN=on: for everyone');
  await form.getByLabel('Email').fill(s.w.admin.email);
  await form.getByLabel('Password').fill(s.w.admin.password);
  await form.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Switch user' }).waitFor();
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
  assert.ok(overflow <= 0, 'the header fits a phone');
});
