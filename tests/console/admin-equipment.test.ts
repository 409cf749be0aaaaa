// Setup's Store settings, Equipment and Options & outcomes in Chromium: a timer saved and a
// change made meanwhile refused with the offer to reload; a locker whose cabinets share a number
// refused beside the second one, then made with its key shown once and a new key on demand; the
// provisioning file's objects marked and left alone; English and French side by side.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { callFromPage, openSetup, serving, signedInPage } from './admin-support.ts';

test('store settings: a timer is saved, and a change someone made meanwhile is refused with the offer to reload', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  // The provisioned store is the file's: shown, not changed here.
  await openSetup(page, s.base, s.w.locationId, 'store', 'Store settings');
  await page.getByText('The provisioning file manages this store').waitFor();
  assert.equal(await page.locator('#store-form').getByRole('button', { name: 'Save the settings' }).isDisabled(), true);

  const made = await callFromPage(page, 'POST', '/api/admin/locations', { name: 'Store Uptown' });
  assert.equal(made.status, 201, made.text);
  const storeId = (made.json() as { id: number }).id;
  await openSetup(page, s.base, storeId, 'store', 'Store settings');
  const form = page.locator('#store-form');
  await form.getByLabel('Escalate after').fill('90');
  await form.getByRole('button', { name: 'Save the settings' }).click();
  await page.getByText('Settings saved').waitFor();
  const read = () =>
    callFromPage(page, 'GET', `/api/admin/locations/${storeId}`).then((r) => r.json() as { cfh_escalation_seconds: number; version: number; name: string });
  const saved = await read();
  assert.equal(saved.cfh_escalation_seconds, 90);

  // Someone renames the store; this form still holds the version before.
  const other = await callFromPage(page, 'PATCH', `/api/admin/locations/${storeId}`, { name: 'Store Downtown' }, { 'if-match': `"${saved.version}"` });
  assert.equal(other.status, 200, other.text);
  await form.getByLabel('Escalate after').fill('45');
  await form.getByRole('button', { name: 'Save the settings' }).click();
  await form.getByText('Someone else changed this while you were editing it. Nothing was saved.').waitFor();
  assert.equal((await read()).cfh_escalation_seconds, 90, 'nothing changed');
  await form.getByRole('button', { name: 'Reload' }).click();
  await form.getByText('Reloaded: these are the current values').waitFor();
  assert.equal(await form.getByLabel('Name', { exact: true }).inputValue(), 'Store Downtown');
  assert.equal(await form.getByLabel('Escalate after').inputValue(), '90');
  await form.getByLabel('Escalate after').fill('45');
  await form.getByRole('button', { name: 'Save the settings' }).click();
  await page.getByText('Settings saved').waitFor();
  assert.deepEqual([(await read()).cfh_escalation_seconds, (await read()).name], [45, 'Store Downtown']);
});

test(
  'a locker whose two cabinets share a number is refused beside the second; corrected, its key is shown once, and a new key on demand',
  { skip },
  async (t) => {
    const s = await serving(t);
    const page = await signedInPage(t, s.base, s.w.admin);
    await openSetup(page, s.base, s.w.locationId, 'equipment', 'Lockers');
    // The provisioned locker is the file's: marked, with nothing to change here.
    const fileRow = page.locator('#section-lockers tr', { hasText: 'Front lockers' });
    await fileRow.getByText('provisioning file').waitFor();
    assert.equal(await fileRow.getByRole('button').count(), 0);

    await page.getByRole('button', { name: 'Add a locker' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a locker' });
    await dialog.getByLabel('Name', { exact: true }).fill('Back lockers');
    await dialog.getByRole('button', { name: 'Add a cabinet' }).click();
    await dialog.locator('[data-field="cabinets[1].key"]').fill('1');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    const second = dialog.locator('[data-for="cabinets[1].key"] .field-error');
    await second.waitFor();
    assert.match((await second.textContent()) ?? '', /twice/);
    assert.equal(await dialog.locator('[data-for="cabinets[0].key"] .field-error').isVisible(), false, 'the first cabinet is not the one in error');

    await dialog.locator('[data-field="cabinets[1].key"]').fill('2');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    const shown = page.getByRole('dialog', { name: 'The key of Back lockers' });
    const key = await shown.getByLabel('Locker api_key').inputValue();
    assert.ok(key.length >= 16, key);
    await shown.getByRole('button', { name: 'Done, I have kept it' }).click();
    const row = page.locator('#section-lockers tr', { hasText: 'Back lockers' });
    assert.match((await row.textContent()) ?? '', /Back lockers2/, 'two cabinets');
    assert.doesNotMatch((await callFromPage(page, 'GET', '/api/admin/lockers')).text, new RegExp(key), 'never in a list');

    await row.getByRole('button', { name: 'New key for Back lockers' }).click();
    await page.getByRole('dialog', { name: 'A new key for Back lockers?' }).getByRole('button', { name: 'Make a new key' }).click();
    const again = page.getByRole('dialog', { name: 'The key of Back lockers' });
    const rotated = await again.getByLabel('Locker api_key').inputValue();
    assert.notEqual(rotated, key);
    await again.getByRole('button', { name: 'Done, I have kept it' }).click();
  },
);

test('options and outcomes show English and French side by side, in the table and in the form', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'options', 'Call for Help options');
  const heads = await page.locator('#section-options thead th').allTextContents();
  assert.deepEqual(heads.slice(0, 2), ['English', 'Français']);
  await page.getByRole('button', { name: 'Add an outcome' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add an outcome' });
  const en = dialog.locator('[data-for="text_en"]');
  const fr = dialog.locator('[data-for="text_fr"]');
  const [a, b] = [await en.boundingBox(), await fr.boundingBox()];
  assert.ok(a !== null && b !== null && Math.abs(a.y - b.y) < 2 && b.x > a.x + a.width - 1, `${JSON.stringify(a)} ${JSON.stringify(b)}`);
  await dialog.getByLabel('Key').fill('sale');
  await en.getByLabel('English').fill('Made a sale');
  await fr.getByLabel('Français').fill('Vente');
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const row = page.locator('#section-outcomes tr', { hasText: 'sale' });
  await row.waitFor();
  assert.deepEqual(
    await row
      .locator('th, td')
      .allTextContents()
      .then((c) => c.slice(0, 3)),
    ['sale', 'Made a sale', 'Vente'],
  );
});

test('a call button made with scan to complete shows its scan code once, and a new one on demand', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'equipment', 'Call buttons');
  await page.getByRole('button', { name: 'Add a call button' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a call button' });
  await dialog.getByLabel('Name', { exact: true }).fill('Paint counter');
  await dialog.getByLabel('Device key (MAC address)').fill('AA:22:33:44:55:77');
  await dialog.getByLabel('Option', { exact: true }).selectOption({ index: 1 });
  await dialog.getByLabel('Scan to complete').check();
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  const shown = page.getByRole('dialog', { name: 'The scan code of Paint counter' });
  const code = await shown.getByLabel('Scan code').inputValue();
  assert.match(code, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}-[0-9A-Z]{6}$/);
  await shown.getByRole('button', { name: 'Done, I have kept it' }).click();
  assert.doesNotMatch((await callFromPage(page, 'GET', '/api/admin/call_buttons')).text, new RegExp(code), 'never in a list');

  const row = page.locator('#section-call-buttons tr', { hasText: 'Paint counter' });
  await row.getByRole('button', { name: 'New scan code for Paint counter' }).click();
  await page.getByRole('dialog', { name: 'A new scan code for Paint counter?' }).getByRole('button', { name: 'Make a new scan code' }).click();
  const again = page.getByRole('dialog', { name: 'The scan code of Paint counter' });
  assert.notEqual(await again.getByLabel('Scan code').inputValue(), code);
});
