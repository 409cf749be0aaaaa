// The CFH queue with version 2's workflow: an escalation appears highlighted without a reload, the
// buttons follow the option's staff_action, a request from a call button names the button, and
// completing offers the location's outcomes (C3 takes only those).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { freshId, provisionToken, testApp } from '../support/world.ts';
import { consoleWorld } from './support.ts';

test('escalation highlighted live, buttons by staff_action, the call button named, outcomes offered on completion', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const ackOption = freshId();
  const buttonId = freshId();
  const deviceKey = `AA:BB:CC:${String(buttonId % 100).padStart(2, '0')}:11:22`;
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, cfh_escalation_seconds: 60, cfh_timeout_seconds: 3600 }],
    cfh_options: [
      {
        id: ackOption,
        organization_id: w.organizationId,
        location_id: w.locationId,
        text_en: 'Spill',
        text_fr: 'Dégât',
        prompt_en: 'Noted',
        prompt_fr: 'Noté',
        staff_action: 'acknowledge',
      },
    ],
    cfh_outcomes: [
      { id: freshId(), location_id: w.locationId, key: 'helped', text_en: 'Customer helped', text_fr: 'Client aidé' },
      { id: freshId(), location_id: w.locationId, key: 'left', text_en: 'Customer had left', text_fr: 'Client parti' },
    ],
    call_buttons: [{ id: buttonId, location_id: w.locationId, name: 'Paint aisle button', device_key: deviceKey, option_id: w.optionId }],
  });
  const hub = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['buttons']);
  const pressed = await ctx.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: `Bearer ${hub}` },
    payload: { device_key: deviceKey },
  });
  assert.equal(pressed.statusCode, 200, pressed.body);
  const fromButton = pressed.body.trim();
  const spill = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: ackOption },
  });
  const spillId = spill.json<{ message_id: string }>().message_id;

  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const buttonCard = page.locator(`li.request[data-message-id="${fromButton}"]`);
  const spillCard = page.locator(`li.request[data-message-id="${spillId}"]`);
  await buttonCard.getByText('Paint aisle button').waitFor();
  assert.deepEqual(await spillCard.getByRole('button').allTextContents(), ['Acknowledge', 'Complete']);
  assert.deepEqual(await buttonCard.getByRole('button').allTextContents(), ['Claim', 'On the way', 'Complete']);
  assert.equal(await buttonCard.evaluate((el) => el.classList.contains('escalated')), false);
  await page.locator('#live.on').waitFor();

  ctx.clock.advance(61_000);
  await ctx.scheduler.runDue();
  await page.locator(`li.request.escalated[data-message-id="${fromButton}"]`).waitFor();
  await buttonCard.getByText('escalated').first().waitFor();

  await buttonCard.getByRole('button', { name: 'Complete' }).click();
  const dialog = page.getByRole('dialog');
  assert.deepEqual(await dialog.getByRole('option').allTextContents(), ['Choose…', 'Customer helped', 'Customer had left']);
  await dialog.getByLabel('Outcome').selectOption('left');
  await dialog.getByRole('button', { name: 'Complete' }).click();
  await page.getByRole('cell', { name: 'Customer had left' }).waitFor();
  const [row] = await ctx.db.query<{ completion_reason: string }>('SELECT completion_reason FROM cfh_requests WHERE message_id = $1', [fromButton]);
  assert.equal(row?.completion_reason, 'left');
});
