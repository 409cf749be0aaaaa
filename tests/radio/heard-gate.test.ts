// Heard messages of one edge device are handled one at a time, in order, with a few waiting: an
// edge device that floods its heard topic while one is being handled gets the rest refused (never
// recorded), and another edge device's messages are handled meanwhile. Driven through the broker,
// with the service's speech held on the first answer (a slow synthesis).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { HEARD_QUEUE_PER_EDGE } from '../../src/radio/heard-gate.ts';
import { outboxState, TestDevice, waitUntil } from '../devices/device.ts';
import { makeWorld, testApp } from '../support/world.ts';
import { HeldSpeech } from './held-speech.ts';
import { anotherEdge, edgeKey, playText } from './support.ts';

const speech = new HeldSpeech();
const ctx = await testApp({ speech });
const { app, db, clock } = ctx;
await ctx.events.runPending();

const heardRows = (edgeId: string) =>
  db.query<{ heard_id: string; outcome: string }>('SELECT heard_id, outcome FROM radio_heard WHERE edge_id = $1 ORDER BY id', [edgeId]);

test("a flood of heard messages from one edge device: one handled at a time, in order, a few waiting, the rest refused; another edge's go on", async (t) => {
  const w = await makeWorld(db, clock);
  const quiet = await anotherEdge(db, clock, w);
  await applyProvisioning(db, clock, {
    radio_edges: [
      { edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, voice_actions: true },
      { edge_id: quiet.edgeId, location_id: w.locationId, name: 'Back radio', device_key: quiet.edgeKey, voice_actions: true },
    ],
  });
  const noisy = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  t.after(() => noisy.end());
  const other = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${quiet.edgeId}`, password: quiet.edgeKey });
  t.after(() => other.end());

  // A play to ack later: the ack, sent after the flood on the same connection, says when the
  // service has been handed every message of the flood.
  const played = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Cleanup on aisle five', actor: 'Manager' });
  assert.equal(played.statusCode, 200, played.body);
  const playId = played.json<{ message_id: string }>().message_id;

  // The first answer ("Nothing is waiting": no request is open) takes as long as the test likes.
  const slow = speech.hold((text) => text.startsWith('Nothing is waiting'));
  const flood = Array.from({ length: HEARD_QUEUE_PER_EDGE + 4 }, () => crypto.randomUUID());
  for (const heardId of flood) {
    await noisy.client.publishAsync(
      `radio/${w.edgeId}/heard`,
      JSON.stringify({ heard_id: heardId, text: "I'm on it", speaker: 'Sam', heard_at: clock.now().toISOString() }),
      { qos: 1 },
    );
  }
  await noisy.publish(`radio/${w.edgeId}/played`, { message_id: playId });
  await waitUntil(async () => (await outboxState(db, playId)).acked_at !== null);
  await slow.reached;

  // Every message of the flood reached the service; the first is being answered, the others wait
  // unrecorded (recording is the first thing handling does) or were refused.
  assert.deepEqual(
    (await heardRows(w.edgeId)).map((h) => h.heard_id),
    [flood[0]],
    'one at a time',
  );

  // Meanwhile another edge device is heard and answered.
  const quietId = crypto.randomUUID();
  await other.client.publishAsync(
    `radio/${quiet.edgeId}/heard`,
    JSON.stringify({ heard_id: quietId, text: "I'm on it", heard_at: clock.now().toISOString() }),
    { qos: 1 },
  );
  await waitUntil(async () => (await heardRows(quiet.edgeId)).some((h) => h.outcome === 'nothing_waiting'));

  slow.release();
  const handled = flood.slice(0, 1 + HEARD_QUEUE_PER_EDGE);
  await waitUntil(async () => (await heardRows(w.edgeId)).filter((h) => h.outcome !== 'pending').length >= handled.length);
  await ctx.devices.settle();
  const rows = await heardRows(w.edgeId);
  assert.deepEqual(
    rows.map((h) => h.heard_id),
    handled,
    'the first and the ones that waited, in the order heard; the rest refused',
  );
  assert.ok(rows.every((h) => h.outcome === 'nothing_waiting'));
});
