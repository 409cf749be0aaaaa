// The console on a phone: every page, with rows in every list, fits 360 and 390 px without the
// page scrolling sideways; a table wider than the screen scrolls inside its own box, which says so.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { placeOrder } from '../support/requests.ts';
import { freshId, provisionToken, testApp } from '../support/world.ts';
import { consoleWorld } from './support.ts';

const PAGES = ['queue', 'lockers', 'radio', 'devices', 'reports', 'webhooks'];
const LONG = 'Customer asks about the outdoor garden furniture collection';

interface Fit {
  page: number;
  screen: number;
  tables: { fits: boolean; scrolls: boolean; hint: boolean }[];
}

/** The page's width against the screen's, and each table: whether it fits its box, else whether the box scrolls and shows a hint. */
const measure = `(() => ({
  page: document.documentElement.scrollWidth, screen: innerWidth,
  tables: [...document.querySelectorAll('main table')].map((t) => {
    const box = t.parentElement;
    const hint = box.parentElement.querySelector('.scroll-hint');
    return { fits: t.scrollWidth <= box.clientWidth, scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
      hint: hint !== null && hint.offsetParent !== null && hint.textContent.trim() !== '' };
  }),
}))()`;

test('every console page with data fits a 360 and a 390 px phone; wide tables scroll in their own box with a hint', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const buttonKey = 'AA:BB:CC:DD:EE:02';
  await applyProvisioning(ctx.db, ctx.clock, {
    cfh_options: [
      { id: w.optionId, organization_id: w.organizationId, location_id: w.locationId, text_en: LONG, text_fr: LONG, prompt_en: 'Garden', prompt_fr: 'Jardin' },
    ],
    call_buttons: [{ id: freshId(), location_id: w.locationId, name: 'Garden centre checkout button', device_key: buttonKey, option_id: w.optionId }],
    webhooks: [
      {
        id: freshId(),
        organization_id: w.organizationId,
        location_id: w.locationId,
        url: 'https://hooks.example.com/storeops/a-rather-long-receiver-path',
        secret: 'a-secret-of-the-receiver-0001',
      },
    ],
  });
  const hub = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['buttons']);
  const pressed = await ctx.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: `Bearer ${hub}` },
    payload: { device_key: buttonKey, voltage: 2.9 },
  });
  assert.equal(pressed.statusCode, 200, pressed.body);
  const cfh = (path: string, payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: `/api/callforhelp/${path}`, headers: { authorization: `Bearer ${w.token}` }, payload });
  for (let i = 0; i < 3; i++) {
    const created = await cfh('requests', { location_id: w.locationId, option_id: w.optionId });
    const messageId = created.json<{ message_id: string }>().message_id;
    const who = { message_id: messageId, claimed_by: 'Alexandra Montgomery-Fitzgerald', claimed_by_user_id: 'u1', channel_id: 'c1' };
    assert.equal((await cfh('claim', who)).statusCode, 200);
    assert.equal((await cfh('complete', { ...who, customer_status: 'not_interested' })).statusCode, 200);
  }
  assert.equal((await cfh('requests', { location_id: w.locationId, option_id: w.optionId })).statusCode, 201);
  await placeOrder(ctx.app, w);
  const said = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/incoming/generic',
    headers: { 'api-key': w.edgeKey },
    payload: { edgeId: w.edgeId, text: LONG, actor: 'Store manager' },
  });
  assert.equal(said.statusCode, 200, said.body);
  await ctx.events.runPending();

  let scrolled = 0;
  for (const width of [360, 390]) {
    const page: Page = await (await browserContext(t, { viewport: { width, height: 800 } })).newPage();
    await page.goto(`${base}/console`);
    await page.getByLabel('Email').fill(w.admin.email);
    await page.getByLabel('Password').fill(w.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    for (const id of PAGES) {
      await page.goto(`${base}/console#/${id}/${w.locationId}`);
      await page.locator(`.page-${id} .page-body`).filter({ hasNotText: 'Loading…' }).waitFor();
      await page.locator(`.page-${id} .page-body :is(table, li, svg, section)`).first().waitFor();
      const fit = await page.evaluate<Fit>(measure);
      assert.ok(fit.page <= fit.screen, `${id} at ${width} px: the page is ${fit.page} px wide`);
      for (const [i, table] of fit.tables.entries()) {
        assert.ok(table.fits || (table.scrolls && table.hint), `${id} at ${width} px, table ${i + 1}: ${JSON.stringify(table)}`);
        if (!table.fits) scrolled++;
      }
    }
  }
  // The Devices table's eight columns cannot fit a phone: the scroll box and its hint were exercised.
  assert.ok(scrolled > 0, 'some table was wider than the phone');
});
