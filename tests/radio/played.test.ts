// An announcement the edge device acks as played is a "radio" event with status "played" (contract
// section 11), written with the ack, once per message, and delivered to the endpoints that take it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventRow } from '../../src/events/log.ts';
import { makeWorld } from '../support/world.ts';
import { byKey, outboxState, TestDevice, waitUntil } from '../devices/device.ts';
import { deliverNow, provisionEndpoint, Receiver, webhookApp } from '../webhooks/support.ts';
import { edgeKey, playText } from './support.ts';

const ctx = await webhookApp();

const playedEvents = (organizationId: number) =>
  ctx.db.query<EventRow>("SELECT * FROM events WHERE organization_id = $1 AND type = 'radio' ORDER BY id", [organizationId]);

test('the edge device\'s ack of a play writes one "played" event, which reaches the webhook', async (t) => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const receiver = await Receiver.start(t);
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: receiver.url, secret: receiver.secret, events: ['radio'] });
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  t.after(() => device.end());
  assert.equal(await device.subscribe(`radio/${w.edgeId}/play`), 1);

  const res = await playText(ctx.app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Cleanup on aisle five', actor: 'Manager' });
  assert.equal(res.statusCode, 200, res.body);
  const messageId = res.json<{ message_id: string }>().message_id;
  await ctx.devices.dispatchPending();
  await device.next(byKey(messageId));
  assert.deepEqual(await playedEvents(w.organizationId), [], 'queued is not played');

  await device.publish(`radio/${w.edgeId}/played`, { message_id: messageId });
  await waitUntil(async () => (await playedEvents(w.organizationId)).length > 0);
  const [event] = await playedEvents(w.organizationId);
  assert.equal(event?.status, 'played');
  assert.equal(event?.location_id, w.locationId);
  assert.equal(event?.internal_id, messageId);
  assert.deepEqual(event?.details, { edge_id: w.edgeId, text: 'Cleanup on aisle five', message_id: messageId });
  assert.equal(event?.message, 'Played on Floor radio: Cleanup on aisle five');
  const acked = await outboxState(ctx.db, messageId);
  assert.ok(acked.acked_at !== null);

  // The device acks its copy again (a redelivery): no second event.
  await device.publish(`radio/${w.edgeId}/played`, { message_id: messageId, again: true });
  await new Promise((resolve) => setTimeout(resolve, 300)); // the broker hands the ack on
  await ctx.devices.settle();
  assert.equal((await playedEvents(w.organizationId)).length, 1);

  await deliverNow(ctx);
  assert.deepEqual(
    receiver.received.map((d) => [d.body.type, d.body.status, d.body.internal_id, d.signed]),
    [['radio', 'played', messageId, true]],
  );
});
