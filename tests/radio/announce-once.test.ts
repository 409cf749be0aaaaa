// An announcement's speech is made before any transaction opens (src/radio/jobs.ts, a PreparedJob
// of src/jobs/scheduler.ts): the job is held by a lease meanwhile. Another instance leaves it alone
// while the lease holds and takes it over once it has run out; whichever worker commits first
// queues the play, and the other's speech is thrown away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frenchOptionWords } from '../../src/cfh/words.ts';
import { Scheduler } from '../../src/jobs/scheduler.ts';
import { RADIO_ANNOUNCE_JOB, radioJobs } from '../../src/radio/jobs.ts';
import { waitUntil } from '../devices/device.ts';
import { otherInstanceDb } from '../support/db.ts';
import { cancelCfhRequest, openCfhRequest } from '../support/requests.ts';
import { makeWorld, testApp, testSpeech } from '../support/world.ts';
import { HeldSpeech } from './held-speech.ts';
import { outboxCount } from './support.ts';

const speech = new HeldSpeech();
const ctx = await testApp({ speech });
const { app, db, clock, config } = ctx;
await ctx.events.runPending();

/** The scheduler of another instance of the service, with the radio's jobs only. */
async function otherInstanceScheduler(): Promise<Scheduler> {
  const other = await otherInstanceDb();
  const scheduler = new Scheduler({ db: other, clock });
  scheduler.registerAll(
    radioJobs({
      speech: testSpeech(),
      ttlSeconds: config.radioMessageTtlSeconds,
      queueLimit: config.radioQueueLimit,
      db: other,
      frenchOptionWords: (requestId) => frenchOptionWords(other, requestId),
    }),
  );
  return scheduler;
}

/** Can another session lock the job's row now? Not while a transaction holds it. */
async function jobRowFree(jobId: number): Promise<boolean> {
  return db.tx(async (q) => (await q.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE SKIP LOCKED', [jobId])).length === 1);
}

/** The location's pending announcement job, once the event log's subscriber has asked for it. */
async function pendingAnnouncement(locationId: number): Promise<number> {
  let jobId = 0;
  await waitUntil(async () => {
    await ctx.events.runPending();
    const [job] = await db.query<{ id: number }>("SELECT id FROM jobs WHERE kind = $1 AND payload->>'location_id' = $2 AND done_at IS NULL", [
      RADIO_ANNOUNCE_JOB,
      String(locationId),
    ]);
    jobId = job?.id ?? 0;
    return jobId !== 0;
  });
  return jobId;
}

/** The status a pending job would say, or null once it is done. */
async function pendingStatus(jobId: number): Promise<string | null> {
  const [job] = await db.query<{ status: string }>("SELECT payload->>'status' AS status FROM jobs WHERE id = $1 AND done_at IS NULL", [jobId]);
  return job?.status ?? null;
}

const announced = async (edgeId: string) =>
  (await db.query<{ cfh_status: string }>("SELECT cfh_status FROM radio_messages WHERE edge_id = $1 AND source = 'announcement' ORDER BY id", [edgeId])).map(
    (m) => m.cfh_status,
  );

test('an announcement is synthesized before its transaction opens, and queued once', async () => {
  const w = await makeWorld(db, clock);
  const other = await otherInstanceScheduler();
  const held = speech.hold((text) => text.startsWith('Customer needs help'));
  await openCfhRequest(app, w);
  const jobId = await pendingAnnouncement(w.locationId);
  clock.advance(3_500);
  const first = ctx.scheduler.runDue();
  try {
    await Promise.race([held.reached, first.then(() => assert.fail('the job ended without synthesizing'))]);
    assert.ok(await jobRowFree(jobId), 'no transaction holds the job while its speech is made');
    assert.equal(await other.runDue(), 0, 'another instance leaves the job alone while it is leased');
    // The first worker is stuck past its lease: another instance takes the job over and says it.
    clock.advance(121_000);
    assert.equal(await other.runDue(), 1);
    assert.equal(await outboxCount(db, w.edgeId), 1);
  } finally {
    held.release();
  }
  await first;
  assert.equal(await outboxCount(db, w.edgeId), 1, "the first worker's late speech is not queued again");
  assert.deepEqual(await announced(w.edgeId), ['created']);
  const [job] = await db.query<{ done: boolean; failed: boolean }>('SELECT done_at IS NOT NULL AS done, failed FROM jobs WHERE id = $1', [jobId]);
  assert.deepEqual(job, { done: true, failed: false });
  assert.equal(await other.runDue(), 0);
  assert.equal(await ctx.scheduler.runDue(), 0, 'nothing is left to run');
});

test('a status that replaces the announcement while it is synthesized is said instead of it', async () => {
  const w = await makeWorld(db, clock);
  const held = speech.hold((text) => text.startsWith('Customer needs help'));
  const messageId = await openCfhRequest(app, w);
  const jobId = await pendingAnnouncement(w.locationId);
  clock.advance(3_500);
  const first = ctx.scheduler.runDue();
  try {
    await Promise.race([held.reached, first.then(() => assert.fail('the job ended without synthesizing'))]);
    await cancelCfhRequest(app, w, messageId);
    // The subscriber reads the cancel once every older transaction of the cluster has ended (other
    // test files share the server): the job is replaced when it has read it, not at once.
    await waitUntil(async () => {
      await ctx.events.runPending();
      return (await pendingStatus(jobId)) === 'cancelled';
    });
    assert.equal(await pendingAnnouncement(w.locationId), jobId, 'the pending job takes the later status');
  } finally {
    held.release();
  }
  await first;
  assert.deepEqual(await announced(w.edgeId), [], 'the words of the status replaced are not queued');
  clock.advance(3_500);
  await ctx.scheduler.runDue();
  assert.deepEqual(await announced(w.edgeId), ['cancelled']);
});
