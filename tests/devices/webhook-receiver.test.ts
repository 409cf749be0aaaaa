// The webhook receiver of the simulators (npm run simulate -- webhooks) prints the events the
// service sends, once each, and refuses what is not signed with the endpoint's secret or is stale.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { startWebhookReceiver } from '../../src/devices/simulators/webhooks.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { makeWorld, provisionToken } from '../support/world.ts';
import { deliverNow, deliveriesOf, provisionEndpoint, redeliver, webhookApp } from '../webhooks/support.ts';

test('the receiver prints each event once and refuses forged or stale requests', async (t) => {
  const ctx = await webhookApp({ t });
  const lines: string[] = [];
  const secret = crypto.randomBytes(20).toString('hex');
  const receiver = startWebhookReceiver({ port: 0, secret, print: (line) => lines.push(line) });
  t.after(() => receiver.close());
  await receiver.ready;
  const url = `http://127.0.0.1:${receiver.port()}/`;

  const w = await makeWorld(ctx.db, ctx.clock);
  const endpointId = await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url, secret });
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  assert.ok(
    lines.some((l) => / callforhelp created \(store \d+\): Customer needs help: Someone is coming$/.test(l)),
    lines.join('\n'),
  );

  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  const [delivery] = await deliveriesOf(ctx.app, token, endpointId);
  assert.equal(delivery?.state, 'delivered');
  assert.equal((await redeliver(ctx.app, token, delivery?.id ?? 0)).statusCode, 202);
  await ctx.webhooks.runDue();
  assert.ok(
    lines.some((l) => l.startsWith(`(again: ${delivery?.event_uuid}`)),
    'a repeat is recognised by its uuid',
  );

  const body = JSON.stringify({ uuid: crypto.randomUUID(), type: 'callforhelp', status: 'created' });
  const now = Math.floor(Date.now() / 1000);
  const sign = (ts: number, key: string) => crypto.createHmac('sha256', key).update(`${ts}${body}`).digest('hex');
  for (const [ts, key] of [
    [now, 'not-the-secret'],
    [now - 120, secret],
    [now + 120, secret],
  ] as const) {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-timestamp': String(ts), 'x-signature': sign(ts, key) },
    });
    assert.equal(res.status, 401);
  }
  const genuine = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-timestamp': String(now), 'x-signature': sign(now, secret) },
  });
  assert.equal(genuine.status, 204);
});
