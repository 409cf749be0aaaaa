// The devices and webhooks pages in a real browser: a locker's health as D1 gives it, and a failed
// delivery shown with its attempt and sent again (W2) after confirming.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { testApp, testConfig } from '../support/world.ts';
import { provisionEndpoint } from '../webhooks/support.ts';
import { consoleWorld } from './support.ts';

test('devices: a locker that reported is online with its firmware and address; webhooks: a failed attempt is shown and sent again', { skip }, async (t) => {
  const ctx = await testApp({ t, config: testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }) });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  // Port 9 (discard) on loopback: nothing listens, every attempt fails.
  const endpointId = await provisionEndpoint(ctx.db, ctx.clock, {
    organizationId: w.organizationId,
    locationId: w.locationId,
    url: 'http://127.0.0.1:9/hook',
    secret: 'console-test-secret-0123456789abcdef',
    events: ['callforhelp'],
  });
  const status = await ctx.app.inject({
    method: 'POST',
    url: '/api/lockers/cabinet/status',
    headers: { 'api-key': w.lockerKey },
    payload: { cabinets: [{ key: 1, front_status: 'closed' }], locker_info: { ip: '10.1.2.3', firmware: '9.8.7' } },
  });
  assert.equal(status.statusCode, 200, status.body);
  await ctx.health.flush();
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  assert.equal(created.statusCode, 201);
  await ctx.events.runPending();
  await ctx.webhooks.runDue();

  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`${base}/console#/devices/${w.locationId}`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const locker = page.getByRole('row', { name: /Front lockers/ });
  await locker.getByText('online').waitFor();
  await locker.getByText('9.8.7').waitFor();
  await locker.getByText('10.1.2.3').waitFor();

  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'http://127.0.0.1:9/hook' }).waitFor();
  const row = page.getByRole('row', { name: /callforhelp · created/ });
  await row.getByText(/ECONNREFUSED|refused|connect/i).waitFor();
  const [before] = await ctx.db.query<{ generation: number }>('SELECT generation FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
  await row.getByRole('button', { name: 'Send again' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Send again' }).click();
  await page.getByText('Queued to send again').waitFor();
  const [after] = await ctx.db.query<{ generation: number; state: string }>('SELECT generation, state FROM webhook_deliveries WHERE endpoint_id = $1', [
    endpointId,
  ]);
  assert.equal(after?.generation, (before?.generation ?? 0) + 1);
  assert.equal(after?.state, 'pending');
});
