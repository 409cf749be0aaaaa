// The radio page with R3: what staff say on the radio (heard by the edge device) appears live beside
// what was played, and another location's message audio is not found.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { TestDevice } from '../devices/device.ts';
import { testApp } from '../support/world.ts';
import { consoleWorld, fromPage, signInHttp } from './support.ts';

test('speech heard on the radio appears live on the radio page with its speaker', { skip }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const page = await (await browserContext(t, { viewport: { width: 820, height: 1180 } })).newPage();
  await page.goto(`${base}/console#/radio/${w.locationId}`);
  await page.getByLabel('Email').fill(w.admin.email);
  await page.getByLabel('Password').fill(w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Nothing played or heard yet.').waitFor();
  await page.locator('#live.on').waitFor();

  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  t.after(() => device.end());
  await device.publish(`radio/${w.edgeId}/heard`, {
    heard_id: crypto.randomUUID(),
    text: 'Is anyone near the <b>garden</b> centre?',
    speaker: 'Robin',
    heard_at: ctx.clock.now().toISOString(),
  });
  const heard = page.locator('li.transcript.heard', { hasText: 'Is anyone near the <b>garden</b> centre?' });
  await heard.waitFor();
  await heard.getByText('Robin').waitFor();
});

test("a played message's audio is found only through an edge device the session may use", async (t) => {
  const ctx = await testApp({ t });
  const mine = await consoleWorld(ctx.db, ctx.clock);
  const other = await consoleWorld(ctx.db, ctx.clock);
  const played = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/incoming/generic',
    headers: { 'api-key': other.edgeKey },
    payload: { edgeId: other.edgeId, text: 'Their announcement', actor: 'Them', process: false },
  });
  assert.equal(played.statusCode, 200, played.body);
  const messageId = played.json<{ message_id: string }>().message_id;
  const s = await signInHttp(ctx.app, mine.admin);
  for (const edge of [mine.edgeId, other.edgeId]) {
    const res = await ctx.app.inject({ url: `/console/api/radio/${encodeURIComponent(edge)}/messages/${messageId}/audio`, headers: { cookie: s.cookie } });
    assert.equal(res.statusCode, 404, edge);
    assert.equal(res.json().code, 'not_found');
  }
  const theirs = await signInHttp(ctx.app, other.admin);
  const ok = await ctx.app.inject({
    url: `/console/api/radio/${encodeURIComponent(other.edgeId)}/messages/${messageId}/audio`,
    headers: { cookie: theirs.cookie },
  });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers['content-type'], 'audio/wav');
});

test('an announcement R1 would refuse (a lone surrogate, nothing to say, a NUL) is a 422 from the console too, and nothing is played', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const url = `/console/api/radio/${encodeURIComponent(w.edgeId)}/announce`;
  const headers = { ...fromPage(s), 'content-type': 'application/json' };
  const outbox = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_outbox'))[0]?.n;
  const before = await outbox();
  for (const text of ['a\udc00b', '\ud800', '   ', 'a\u0000b']) {
    const res = await ctx.app.inject({ method: 'POST', url, headers, payload: JSON.stringify({ text }) });
    assert.equal(res.statusCode, 422, `${JSON.stringify(text)}: ${res.body}`);
    assert.equal(res.json().code, 'validation_failed');
  }
  assert.equal(await outbox(), before, 'nothing sent to the edge device');
  const ok = await ctx.app.inject({ method: 'POST', url, headers, payload: JSON.stringify({ text: 'Cleanup in aisle 5' }) });
  assert.equal(ok.statusCode, 200, ok.body);
});
