// Who sees Setup (section 18 in the console): a location admin only their stores and not the
// organization's tabs, staff no Setup at all (and the API refuses them), a console-scope token
// nobody; a phone's width keeps Setup's forms on the screen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { makeWorld, provisionToken } from '../support/world.ts';
import { makePerson } from './support.ts';
import { callFromPage, DESKTOP, openSetup, serving, signedInPage } from './admin-support.ts';

test('a location admin sees Setup of their store only: its people, not the organization’s tabs, and nothing of another store', { skip }, async (t) => {
  const s = await serving(t);
  const other = await makeWorld(s.db, s.clock, { organizationId: s.w.organizationId });
  const lou = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [s.w.locationId] });
  await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Kai', role: 'staff', locationIds: [s.w.locationId] });
  await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Noor', role: 'staff', locationIds: [other.locationId] });

  const page = await signedInPage(t, s.base, lou);
  assert.equal(await page.locator('#location').count(), 0, 'one store: no store to choose');
  assert.equal(await page.locator('.who .store').textContent(), `Store ${s.w.locationId}`);
  await page.getByRole('link', { name: 'Setup' }).click();
  await page.getByRole('heading', { name: 'Store settings' }).waitFor();
  const tabs = await page.getByRole('navigation', { name: 'Setup' }).getByRole('link').allTextContents();
  assert.deepEqual(tabs, ['Store settings', 'Equipment', 'Options & outcomes', 'People', 'Service accounts', 'Store devices']);

  await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'People' }).click();
  await page.locator('#section-people tr', { hasText: 'Kai' }).waitFor();
  const names = await page.locator('#section-people tbody th').allTextContents();
  assert.ok(names.includes('Lou') && names.includes('Sam') && !names.includes('Noor'), names.join());

  // The role's stores in a new person's form: this store only.
  await page.getByRole('button', { name: 'Add a person' }).click();
  const stores = await page.getByRole('dialog', { name: 'Add a person' }).locator('fieldset.checks label').allTextContents();
  assert.deepEqual(
    stores.map((x) => x.trim()),
    [`Store ${s.w.locationId}`],
  );
  const roles = await page.getByRole('dialog', { name: 'Add a person' }).getByLabel('Role').locator('option').allTextContents();
  assert.deepEqual(roles, ['store admin', 'staff'], 'a store admin grants no organization admin');
  await page.keyboard.press('Escape');

  for (const url of [`/api/admin/store_devices?location_id=${other.locationId}`, `/api/admin/people?location_id=${other.locationId}`]) {
    assert.equal((await callFromPage(page, 'GET', url)).status, 404, url);
  }
  await page.goto(`${s.base}/console#/setup/${s.w.locationId}/sso`);
  await page.waitForURL(`**/console#/setup/${s.w.locationId}/store`);
});

test('staff have no Setup: no link, its address leads to the queue, and the administration API answers 403', { skip }, async (t) => {
  const s = await serving(t);
  const robin = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Robin', role: 'staff', locationIds: [s.w.locationId] });
  const page = await signedInPage(t, s.base, robin, DESKTOP);
  await page.getByRole('link', { name: 'Call for Help' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Setup' }).count(), 0);
  await page.goto(`${s.base}/console#/setup/${s.w.locationId}/people`);
  await page.waitForURL(`**/console#/queue/${s.w.locationId}`);
  assert.equal(await page.getByRole('heading', { name: 'Setup' }).count(), 0);
  for (const [method, url, body] of [
    ['GET', '/api/admin/people'],
    ['GET', '/api/admin/service_accounts'],
    ['POST', '/api/admin/people', { email: 'x@example.com', name: 'X', memberships: [{ role: 'staff', location_ids: [s.w.locationId] }] }],
    ['POST', '/api/admin/service_accounts', { name: 'sneaky' }],
  ] as const) {
    const res = await callFromPage(page, method, url, body);
    assert.equal(res.status, 403, `${method} ${url}: ${res.text}`);
  }
});

test('a token with the console scope administers nothing', async (t) => {
  const s = await serving(t);
  const token = await provisionToken(s.db, s.clock, s.w.organizationId, ['console']);
  for (const url of ['/api/admin/people', '/api/admin/service_accounts', '/api/admin/audit']) {
    const res = await s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 403, url);
    assert.equal(res.json().code, 'insufficient_scope');
  }
  const signIn = await s.app.inject({ method: 'POST', url: '/api/session', payload: { token } });
  assert.equal(signIn.statusCode, 422, 'no way to sign in with a token');
});

test('on a phone, Setup’s tabs and a person’s form fit the screen without sideways scrolling', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin, { width: 360, height: 740 });
  await openSetup(page, s.base, s.w.locationId, 'people', 'People');
  await page.locator('#section-people tbody tr').first().waitFor();
  await page.getByRole('button', { name: 'Add a person' }).click();
  await page.getByRole('dialog', { name: 'Add a person' }).getByLabel('Name').waitFor();
  const widths = await page.evaluate(
    '[document.documentElement.scrollWidth, window.innerWidth, document.querySelector("dialog").getBoundingClientRect().right]',
  );
  const [scroll, inner, right] = widths as number[];
  assert.ok((scroll as number) <= (inner as number), `the page is ${scroll}px wide on a ${inner}px screen`);
  assert.ok((right as number) <= (inner as number), `the form ends at ${right}px`);
});
