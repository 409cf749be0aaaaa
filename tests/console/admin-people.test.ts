// Setup's People, Service accounts and Single sign-on tabs in Chromium: an org admin adds a person
// with a one-time password shown once (which then signs them in), the API's 422 errors appear beside
// their fields, a change made meanwhile by someone else is a version conflict that offers to reload,
// and a token is shown once then revoked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { callFromPage, openSetup, serving, signedInPage } from './admin-support.ts';
import { makePerson } from './support.ts';

test('an org admin adds a person with a one-time password, shown once with a copy button, that signs them in', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'people', 'People');
  await page.getByRole('button', { name: 'Add a person' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a person' });
  await dialog.getByLabel('Name').fill('Robin Roe');
  await dialog.getByLabel('Email').fill('robin.roe@example.com');
  assert.equal(await dialog.getByLabel('Make a one-time password').isChecked(), true);
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();

  const secret = page.getByRole('dialog', { name: 'A one-time password for Robin Roe' });
  await secret.waitFor();
  assert.match((await secret.textContent()) ?? '', /Shown once: copy it now/);
  const password = await secret.getByLabel('One-time password').inputValue();
  assert.ok(password.length >= 12, password);
  await secret.getByRole('button', { name: 'Copy' }).click();
  await secret.getByText('Copied.').waitFor();
  await secret.getByRole('button', { name: 'Done, I have kept it' }).click();

  const row = page.locator('#section-people tr', { hasText: 'robin.roe@example.com' });
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /staff at Store \d+/);
  assert.equal(await page.getByText(password).count(), 0, 'the password is gone from the page');

  const signIn = await s.app.inject({ method: 'POST', url: '/api/session', payload: { email: 'robin.roe@example.com', password } });
  assert.equal(signIn.statusCode, 200, signIn.body);
  assert.equal(signIn.json().must_change_password, true);
  const listed = await callFromPage(page, 'GET', `/api/admin/people?location_id=${s.w.locationId}`);
  assert.doesNotMatch(listed.text, new RegExp(password), 'never in a list');
});

test('the API refusing a field shows its words beside that field, and nothing is made', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'people', 'People');
  await page.getByRole('button', { name: 'Add a person' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a person' });
  await dialog.getByLabel('Name').fill('Kim');
  await dialog.getByLabel('Email').fill('not an email');
  await dialog.getByLabel(`Store ${s.w.locationId}`).uncheck();
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();

  const email = dialog.getByLabel('Email');
  await dialog.locator('[data-for="email"] .field-error').waitFor();
  assert.match((await dialog.locator('[data-for="email"] .field-error').textContent()) ?? '', /pattern|match/i);
  assert.equal(await email.getAttribute('aria-invalid'), 'true');
  assert.match(String(await email.getAttribute('aria-describedby')), /-email-error/);
  assert.equal(await page.locator(':focus').getAttribute('name'), 'email', 'the first field in error has the focus');
  await dialog.locator('.form-notice [role=alert]').waitFor();

  // Corrected email; a staff role at no store is the API's refusal too, beside the role's stores.
  await email.fill('kim@example.com');
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const stores = dialog.locator('[data-field="memberships[0].location_ids"]');
  await stores.locator('xpath=..').locator('.field-error').filter({ hasText: /./ }).waitFor();
  assert.equal(await email.getAttribute('aria-invalid'), null, 'the corrected field is no longer marked');
  const people = await callFromPage(page, 'GET', '/api/admin/people');
  assert.doesNotMatch(people.text, /kim@example\.com/);
});

test('a person changed by someone else meanwhile: saving says so and offers to reload, then the change goes through', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  const made = await callFromPage(page, 'POST', '/api/admin/people', {
    email: 'lee@example.com',
    name: 'Lee',
    memberships: [{ role: 'staff', location_ids: [s.w.locationId] }],
  });
  assert.equal(made.status, 201, made.text);
  const lee = made.json() as { id: number; version: number };
  await openSetup(page, s.base, s.w.locationId, 'people', 'People');
  await page.getByRole('button', { name: 'Edit Lee' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change Lee' });
  await dialog.getByLabel('Name').fill('Lee from the console');

  // Another administrator renames Lee first.
  const other = await callFromPage(page, 'PATCH', `/api/admin/people/${lee.id}`, { name: 'Lee Park' }, { 'if-match': `"${lee.version}"` });
  assert.equal(other.status, 200, other.text);

  await dialog.getByRole('button', { name: 'Save' }).click();
  const alert = dialog.getByRole('alert');
  await alert.getByText('Someone else changed this while you were editing it. Nothing was saved.').waitFor();
  await alert.getByRole('button', { name: 'Reload' }).click();
  await dialog.getByText('Reloaded: these are the current values').waitFor();
  assert.equal(await dialog.getByLabel('Name').inputValue(), 'Lee Park');
  await dialog.getByLabel('Name').fill('Lee Park-Smith');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.locator('#section-people tr', { hasText: 'Lee Park-Smith' }).waitFor();
  const read = (await callFromPage(page, 'GET', `/api/admin/people/${lee.id}`)).json() as { name: string; version: number };
  assert.deepEqual([read.name, read.version], ['Lee Park-Smith', lee.version + 2]);
});

test('a service account token is shown once, then listed without its value, and revoked from the page', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'accounts', 'Service accounts');
  await page.getByRole('button', { name: 'Add a service account' }).click();
  const add = page.getByRole('dialog', { name: 'Add a service account' });
  await add.getByLabel('Name').fill('paint hub');
  await add.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('button', { name: 'New token of paint hub' }).click();
  const form = page.getByRole('dialog', { name: 'A new token of paint hub' });
  await form.getByLabel('Token name').fill('hub 1');
  await form.getByLabel('buttons').check();
  await form.getByLabel(`Store ${s.w.locationId}`).check();
  await form.getByRole('button', { name: 'Make the token' }).click();
  const secret = page.getByRole('dialog', { name: 'The token hub 1' });
  const token = await secret.getByLabel('Bearer token').inputValue();
  await secret.getByRole('button', { name: 'Done, I have kept it' }).click();

  const press = () =>
    s.app.inject({ method: 'POST', url: '/api/callbutton/press', headers: { authorization: `Hub ${token}` }, payload: { device_key: 'no-such-button' } });
  assert.equal((await press()).statusCode, 404, 'the token works: an unknown button, not a refused token');
  const line = page.locator('li.token', { hasText: 'hub 1' });
  await line.waitFor();
  assert.doesNotMatch((await page.locator('#section-accounts').textContent()) ?? '', new RegExp(token));
  await line.getByRole('button', { name: 'Revoke the token hub 1' }).click();
  await page.getByRole('dialog', { name: 'Revoke the token hub 1?' }).getByRole('button', { name: 'Revoke' }).click();
  await line.getByText('revoked').waitFor();
  assert.equal((await press()).statusCode, 401);
});

test('an org admin maps a claim value to a role on the Single sign-on tab, and deletes it', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'sso', 'Single sign-on role mappings');
  await page.getByRole('button', { name: 'Add a mapping' }).click();
  const dialog = page.getByRole('dialog', { name: 'Map a claim value to a role' });
  await dialog.getByLabel('Claim value').fill('store-staff');
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const row = page.locator('#section-sso tr', { hasText: 'store-staff' });
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', new RegExp(`staff.*Store ${s.w.locationId}`));
  await row.getByRole('button', { name: 'Delete the mapping store-staff' }).click();
  await page.getByRole('dialog', { name: 'Delete the mapping store-staff?' }).getByRole('button', { name: 'Delete' }).click();
  await page.locator('#section-sso').getByText('No mapping').waitFor();
});

test('with the keyboard alone: a service account added from its dialog, which opens on its field and closes on Enter', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'accounts', 'Service accounts');
  await page.getByRole('button', { name: 'Add a service account' }).focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Add a service account' });
  await dialog.waitFor();
  assert.equal(await page.locator(':focus').getAttribute('name'), 'name', 'the first field has the focus');
  await page.keyboard.type('kiosk');
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'detached' });
  await page.locator('#section-accounts tr', { hasText: 'kiosk' }).waitFor();
  // Escape closes a dialog without a change.
  await page.getByRole('button', { name: 'Add a service account' }).focus();
  await page.keyboard.press('Enter');
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
});

test('a store admin enrolls a tablet from Setup: it signs them out there and becomes the store’s badge and PIN sign-in', { skip }, async (t) => {
  const s = await serving(t);
  const lou = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [s.w.locationId] });
  const tablet = await signedInPage(t, s.base, lou, { width: 820, height: 1180 });
  await openSetup(tablet, s.base, s.w.locationId, 'store-devices', 'Store devices');
  await tablet.getByText('No store device is enrolled here.').waitFor();
  await tablet.getByRole('button', { name: 'Enroll this browser' }).click();
  const dialog = tablet.getByRole('dialog', { name: `Enroll this browser as a device of Store ${s.w.locationId}` });
  await dialog.getByLabel('Device name').fill('Front desk tablet');
  await dialog.getByRole('button', { name: 'Enroll and sign out' }).click();
  await tablet.getByRole('heading', { name: `Sign in at Store ${s.w.locationId}` }).waitFor();

  const office = await signedInPage(t, s.base, lou);
  await openSetup(office, s.base, s.w.locationId, 'store-devices', 'Store devices');
  const row = office.locator('#section-store-devices tr', { hasText: 'Front desk tablet' });
  await row.getByText('enrolled').waitFor();
  assert.match((await row.textContent()) ?? '', /Lou/);
  await row.getByRole('button', { name: 'Revoke Front desk tablet' }).click();
  await office.getByRole('dialog', { name: 'Revoke Front desk tablet?' }).getByRole('button', { name: 'Revoke' }).click();
  await row.getByText(/revoked/).waitFor();
});
