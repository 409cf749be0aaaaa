// The console speaks the store's words, not the API's: a request made by an integration (source
// `api`) says "integration", one nobody has taken yet (`created`) says "waiting", and a call button
// that was never pressed is "not seen yet" rather than a red "offline".
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { freshId, testApp } from '../support/world.ts';
import { consoleWorld } from './support.ts';

test("a request from an integration is 'integration' and 'waiting'; a button never pressed is 'not seen yet'", { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  await applyProvisioning(ctx.db, ctx.clock, {
    call_buttons: [{ id: freshId(), location_id: w.locationId, name: 'Garden button', device_key: 'AA:BB:CC:DD:EE:01', option_id: w.optionId }],
  });
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  assert.equal(created.statusCode, 201, created.body);
  const messageId = created.json<{ message_id: string; source: string; status: string }>().message_id;
  assert.deepEqual([created.json().source, created.json().status], ['api', 'created']);

  const page = await (await browserContext(t, { viewport: { width: 390, height: 844 } })).newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const meta = page.locator(`li.request[data-message-id="${messageId}"] .meta`);
  await meta.waitFor();
  const words = await meta.innerText();
  assert.match(words, /\bwaiting\b/);
  assert.match(words, /\bintegration\b/);
  assert.doesNotMatch(words, /\bcreated\b|\bapi\b/);

  await page.goto(`${base}/console#/devices/${w.locationId}`);
  const button = page.locator('tr', { hasText: 'Garden button' });
  await button.waitFor();
  assert.match(await button.innerText(), /not seen yet/);
  assert.doesNotMatch(await button.innerText(), /offline/);
  assert.equal(await button.locator('.badge.bad').count(), 0, 'nothing red for a device that never came');
});
