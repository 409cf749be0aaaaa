// The console keeps itself live across a restart of the service: its stream ends with the old
// process, the browser reconnects by itself to the new one on the same address, and changes made
// there appear without a reload. The stream itself needs a session and a location it may see.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { browserContext, refuseLiveStreams, skipWithoutChromium as skip } from '../support/browser.ts';
import { openSse } from '../support/sse.ts';
import { testApp } from '../support/world.ts';
import { consoleWorld, signInHttp } from './support.ts';

test('the console stream sends ready, then a change naming what changed in its location', async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const stream = await openSse(t, `http://127.0.0.1:${port}/console/api/locations/${w.locationId}/stream`, { cookie: s.cookie });
  assert.equal(stream.status, 200);
  await stream.next('ready');
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  assert.equal(res.statusCode, 201);
  const change = JSON.parse((await stream.next('change', 10_000)).data) as { kinds: string[]; statuses: string[] };
  assert.deepEqual(change.kinds, ['callforhelp']);
  assert.ok(change.statuses.includes('callforhelp:created'));
  const refused = await fetch(`http://127.0.0.1:${port}/console/api/locations/${w.locationId}/stream`);
  assert.equal(refused.status, 401);
});

test('after the service restarts, the page reconnects by itself and shows new requests without a reload', { skip }, async (t) => {
  const first = await testApp({ t });
  await first.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = first.app.server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  const w = await consoleWorld(first.db, first.clock);
  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.keyboard.press('Enter');
  await page.locator('#live.on').waitFor();
  let navigations = 0;
  page.on('framenavigated', () => navigations++);

  await first.app.close();
  await page.locator('#live.off').waitFor();
  const second = await testApp({ t });
  await second.app.listen({ port, host: '127.0.0.1' });
  await page.locator('#live.on').waitFor({ timeout: 20_000 });
  const res = await second.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const messageId = res.json<{ message_id: string }>().message_id;
  await page.locator(`li.request[data-message-id="${messageId}"]`).waitFor();
  assert.equal(navigations, 0, 'no reload');
});

test('the queue is usable with the keyboard alone: sign in, reach Claim with Tab, press Enter', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`http://127.0.0.1:${port}/console`);
  // The sign-in form puts the focus on its first field once it is drawn.
  await page.getByLabel('Email').waitFor();
  for (let i = 0; i < 50 && (await page.evaluate('document.activeElement?.id')) !== 'email'; i++) await new Promise((r) => setTimeout(r, 50));
  await page.keyboard.type(w.admin.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(w.admin.password);
  await page.keyboard.press('Enter');
  await page.locator('li.request').waitFor();
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = (await page.evaluate('document.activeElement?.textContent')) === 'Claim';
  }
  assert.ok(reached, 'Claim is reachable with Tab');
  await page.keyboard.press('Enter');
  await page.getByText('Claimed by Sam').waitFor();
});

test('a live update keeps the keyboard focus: Claim reached with Tab stays focused when another request arrives, and Enter claims', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const create = () =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${w.token}` },
      payload: { location_id: w.locationId, option_id: w.optionId },
    });
  const first = (await create()).json<{ message_id: string }>().message_id;
  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`http://127.0.0.1:${port}/console`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator(`li.request[data-message-id="${first}"]`).waitFor();
  await page.locator('#live.on').waitFor(); // the stream is open: the next change redraws the queue
  await page.locator(`li.request[data-message-id="${first}"] button`, { hasText: 'Claim' }).focus();
  // Another customer asks: the queue is redrawn while the focus is on the first request's Claim.
  const second = (await create()).json<{ message_id: string }>().message_id;
  await page.locator(`li.request[data-message-id="${second}"]`).waitFor();
  assert.equal(
    await page.evaluate(`document.activeElement?.closest('[data-message-id]')?.getAttribute('data-message-id')`),
    first,
    'the focus is still on the first request',
  );
  await page.keyboard.press('Enter');
  await page.locator(`li.request[data-message-id="${first}"]`).getByText('Claimed by Sam').waitFor();
});

test('a console whose stream is refused (429) says it is not live and still shows new requests by reading again', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  const refused = await refuseLiveStreams(page);
  await page.goto(`http://127.0.0.1:${port}/console`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.keyboard.press('Enter');
  await page.getByText('No one is waiting for help.').waitFor();
  await page.locator('#live.off').waitFor();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const messageId = res.json<{ message_id: string }>().message_id;
  await page.locator(`li.request[data-message-id="${messageId}"]`).waitFor({ timeout: 15_000 });
  assert.ok(refused() >= 1, 'the stream was asked for and refused');
  assert.ok(refused() <= 4, `a refused stream is not asked for again at once (${refused()} tries)`);
});
