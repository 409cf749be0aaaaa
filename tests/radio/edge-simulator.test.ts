// The edge simulator as an edge device must behave (contract section 12): a play message past its
// expires_at is dropped unplayed; --say reports speech on its heard topic.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { isExpired, startEdgeSimulator } from '../../src/devices/simulators/edge.ts';
import { waitUntil } from '../devices/device.ts';
import { makeWorld, testApp } from '../support/world.ts';
import { edgeKey, playText } from './support.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;

function outDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-edge-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a message is expired at and after its expires_at, never without one', () => {
  const now = new Date('2026-01-15T09:00:00.000Z');
  assert.equal(isExpired({ expires_at: '2026-01-15T09:00:00.000000Z' }, now), true);
  assert.equal(isExpired({ expires_at: '2026-01-15T08:59:00.000000Z' }, now), true);
  assert.equal(isExpired({ expires_at: '2026-01-15T09:00:01.000000Z' }, now), false);
  assert.equal(isExpired({}, now), false);
  assert.equal(isExpired({ expires_at: 'soon' }, now), false);
});

test('the edge simulator plays a message in time, and drops unplayed (acked "expired") one that reaches it late', async () => {
  const w = await makeWorld(db, clock);
  const dir = outDir();
  const lines: string[] = [];
  // The device's clock runs 130 s ahead of the service's: every message reaches it past its expiry.
  let ahead = 0;
  const sim = startEdgeSimulator({
    edgeId: w.edgeId,
    key: w.edgeKey,
    mqttUrl: ctx.mqttUrl,
    outDir: dir,
    play: false,
    print: (l) => lines.push(l),
    persistentSession: false,
    now: () => new Date(clock.now().getTime() + ahead),
  });
  try {
    await sim.ready;
    const inTime = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Spill in aisle 4.', actor: 'x' });
    const first = inTime.json<{ message_id: string }>().message_id;
    await waitUntil(async () => fs.existsSync(path.join(dir, `${first}.wav`)));
    ahead = 130_000;
    const late = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Spill in aisle 6.', actor: 'x' });
    const second = late.json<{ message_id: string }>().message_id;
    await waitUntil(async () => {
      const [row] = await db.query<{ ack: { status?: string } | null }>('SELECT ack FROM device_outbox WHERE message_key = $1', [second]);
      return row?.ack?.status === 'expired';
    });
    assert.equal(fs.existsSync(path.join(dir, `${second}.wav`)), false, 'not played');
    assert.ok(lines.some((l) => l.includes('dropped unplayed')));
  } finally {
    await sim.close();
  }
});

test("--say reports the phrase on the edge device's heard topic, and the service records it", async () => {
  const w = await makeWorld(db, clock);
  const sim = startEdgeSimulator({
    edgeId: w.edgeId,
    key: w.edgeKey,
    mqttUrl: ctx.mqttUrl,
    outDir: outDir(),
    play: false,
    print: () => {},
    persistentSession: false,
    say: ["I'm on it"],
    speaker: 'Sam',
  });
  try {
    await sim.ready;
    await waitUntil(async () => (await db.query('SELECT 1 FROM radio_heard WHERE edge_id = $1', [w.edgeId])).length > 0);
    const [heard] = await db.query<{ text: string; speaker: string; intent: string }>('SELECT text, speaker, intent FROM radio_heard WHERE edge_id = $1', [
      w.edgeId,
    ]);
    assert.deepEqual(heard, { text: "I'm on it", speaker: 'Sam', intent: 'claim' });
  } finally {
    await sim.close();
  }
});
