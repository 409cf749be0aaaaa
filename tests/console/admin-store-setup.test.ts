// Setting up a store from the console, end to end, across two instances: an org admin on instance
// A adds a store, an option and a call button in Setup; the button's first press through B1 on
// instance B makes a request that a store admin's console on instance B shows on the queue, with
// no file and no restart.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { otherInstanceDb, provisionToken, testApp } from '../support/world.ts';
import { makePerson } from './support.ts';
import { openSetup, serving, signedInPage } from './admin-support.ts';

test('a store and its call button made on one instance’s console take a press on another instance, whose console shows it', { skip }, async (t) => {
  const a = await serving(t);
  const b = await testApp({ t, db: await otherInstanceDb(), clock: a.clock });
  await b.app.listen({ port: 0, host: '127.0.0.1' });
  const bBase = `http://127.0.0.1:${(b.app.server.address() as AddressInfo).port}`;
  const hub = await provisionToken(a.db, a.clock, a.w.organizationId, ['buttons']);

  const page = await signedInPage(t, a.base, a.w.admin);
  await openSetup(page, a.base, a.w.locationId, 'store', 'Store settings');
  await page.getByRole('button', { name: 'Add a store' }).click();
  const addStore = page.getByRole('dialog', { name: 'Add a store' });
  await addStore.getByLabel('Name', { exact: true }).fill('Store North');
  await addStore.getByLabel('Store number').fill('N-1');
  await addStore.getByRole('button', { name: 'Add the store' }).click();
  await page.waitForURL((u) => /#\/setup\/(\d+)\/store$/.exec(u.hash)?.[1] !== String(a.w.locationId));
  const storeId = Number(/#\/setup\/(\d+)\//.exec(page.url())?.[1]);
  assert.ok(storeId > 0 && storeId !== a.w.locationId, page.url());
  await page.locator('#location option', { hasText: 'Store North' }).waitFor({ state: 'attached' });
  assert.equal(await page.locator('#location').inputValue(), String(storeId), 'the header shows the new store');

  await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Options & outcomes' }).click();
  await page.getByRole('button', { name: 'Add an option' }).click();
  const addOption = page.getByRole('dialog', { name: 'Add a Call for Help option' });
  const [textEn, textFr] = [addOption.locator('[data-for="text_en"] input'), addOption.locator('[data-for="text_fr"] input')];
  await textEn.fill('Paint counter help');
  await textFr.fill('Aide au comptoir de peinture');
  await addOption.locator('[data-for="prompt_en"] textarea').fill('Someone is coming');
  await addOption.locator('[data-for="prompt_fr"] textarea').fill("Quelqu'un arrive");
  await addOption.getByRole('button', { name: 'Add', exact: true }).click();
  await page.locator('#section-options tr', { hasText: 'Paint counter help' }).waitFor();

  await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Equipment' }).click();
  await page.getByRole('button', { name: 'Add a call button' }).click();
  const addButton = page.getByRole('dialog', { name: 'Add a call button' });
  await addButton.getByLabel('Name', { exact: true }).fill('Paint counter');
  await addButton.getByLabel('Device key').fill('AA:22:33:44:55:77');
  await addButton.getByLabel('Option', { exact: true }).selectOption({ label: 'Paint counter help · Aide au comptoir de peinture' });
  await addButton.getByRole('button', { name: 'Add', exact: true }).click();
  await page.locator('#section-call-buttons tr', { hasText: 'Paint counter' }).waitFor();

  // The store's admin watches the new store's queue on instance B.
  const lou = await makePerson(a.db, a.clock, a.w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [storeId] });
  const queue = await signedInPage(t, bBase, lou);
  await queue.getByRole('heading', { name: 'Call for Help' }).waitFor();
  assert.equal(await queue.locator('.who .store').textContent(), 'Store North');

  const press = await b.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: `Hub ${hub}` },
    payload: { device_key: 'aa:22:33:44:55:77' },
  });
  assert.equal(press.statusCode, 200, press.body);
  const card = queue.locator(`[data-message-id="${press.body}"]`);
  await card.waitFor({ timeout: 10_000 });
  assert.match((await card.textContent()) ?? '', /Paint counter help/);
  assert.match((await card.textContent()) ?? '', /Paint counter/);
});
