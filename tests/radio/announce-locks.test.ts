// An announcement job makes every edge device's audio before it takes any edge's queue lock
// (src/radio/announce.ts): while one edge's announcement is being synthesized (slowly, here: held),
// plays for the location's edge devices are queued at once, never waiting for that synthesis.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RADIO_ANNOUNCE_JOB } from '../../src/radio/jobs.ts';
import { waitUntil } from '../devices/device.ts';
import { openCfhRequest } from '../support/requests.ts';
import { makeWorld, testApp } from '../support/world.ts';
import { HeldSpeech } from './held-speech.ts';
import { anotherEdge, edgeKey, playText } from './support.ts';

const speech = new HeldSpeech();
const ctx = await testApp({ speech });
const { app, db, clock } = ctx;
await ctx.events.runPending();

/** Sessions of this database waiting for an advisory lock (the edge queues' locks). */
async function waitingForALock(): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
  );
  return row?.n ?? 0;
}

test("while an announcement is synthesized for one edge device, plays for the location's edge devices are not held up by it", async () => {
  const w = await makeWorld(db, clock);
  const back = await anotherEdge(db, clock, w);
  // The announcement of the second edge device (in edge id order) takes as long as the test likes.
  const slow = speech.hold((text) => text.startsWith('Customer needs help'), 1);
  await openCfhRequest(app, w);
  await ctx.events.runPending();
  await waitUntil(async () => {
    await ctx.events.runPending();
    const [asked] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND payload->>'location_id' = $2 AND done_at IS NULL", [
      RADIO_ANNOUNCE_JOB,
      String(w.locationId),
    ]);
    return (asked?.n ?? 0) > 0;
  });
  clock.advance(3_500);
  const job = ctx.scheduler.runDue();
  try {
    await Promise.race([slow.reached, job.then(() => assert.fail('the job ended without announcing'))]);
    let answered = false;
    const plays = Promise.all([
      playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Cleanup on aisle five', actor: 'Manager' }),
      playText(app, edgeKey(back.edgeKey), { edgeId: back.edgeId, text: 'Carts needed at the front', actor: 'Manager' }),
    ]).finally(() => (answered = true));
    await waitUntil(async () => answered || (await waitingForALock()) > 0);
    assert.ok(answered, "a play waits for an edge device's queue lock held across the announcement's synthesis");
    assert.deepEqual(
      (await plays).map((r) => r.statusCode),
      [200, 200],
    );
  } finally {
    slow.release();
    await job;
  }
  const said = await db.query<{ edge_id: string }>(
    "SELECT edge_id FROM radio_messages WHERE source = 'announcement' AND edge_id = ANY ($1::text[]) ORDER BY edge_id",
    [[w.edgeId, back.edgeId]],
  );
  assert.deepEqual(
    said.map((s) => s.edge_id),
    [w.edgeId, back.edgeId].sort(),
    'both announced once the synthesis ended',
  );
});
