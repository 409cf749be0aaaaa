// No late plays (contract section 12): a play message expires (never sent or sent again after its
// expires_at, event "expired"), urgent ones go first, an edge device holds a bounded queue (the
// oldest normal one dropped, event "dropped"), and the same text within 10 s is one announcement.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TestDevice, type Received } from '../devices/device.ts';
import { makeWorld, testApp, testConfig, type World } from '../support/world.ts';
import { playByEdge } from './support.ts';

const ctx = await testApp({ config: testConfig({ RADIO_MESSAGE_TTL_SECONDS: '120', RADIO_QUEUE_LIMIT: '4' }) });
const { app, db, clock, devices } = ctx;

const play = (w: World, text: string, priority?: 'urgent' | 'normal') => playByEdge(app, w, { text, actor: 'Manager', ...(priority ? { priority } : {}) });

async function radioEvents(w: World, status: string): Promise<string[]> {
  const rows = await db.query<{ internal_id: string }>(
    "SELECT internal_id FROM events WHERE type = 'radio' AND status = $1 AND organization_id = $2 ORDER BY id",
    [status, w.organizationId],
  );
  return rows.map((r) => r.internal_id);
}

/** The edge device comes (back) online: what the service sends it now, in first-seen order. */
async function comeOnline(w: World): Promise<{ device: TestDevice; firstSeen: () => string[] }> {
  // What was queued while it was away has had its first publish (to nobody) before it comes.
  await devices.dispatchPending();
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  assert.equal(await device.subscribe(`radio/${w.edgeId}/play`), 1);
  await devices.redeliverTo(`radio/${w.edgeId}/play`);
  const firstSeen = () => [...new Set(device.received.map((m: Received) => String(m.body.message_id)))];
  return { device, firstSeen };
}

/** A message queued now arrives after anything sent before it (QoS 1 keeps one subscription's order). */
async function sentinel(w: World, device: TestDevice): Promise<string> {
  clock.advance(11_000);
  const id = await play(w, `Sentinel ${Math.random()}`);
  await device.next((m) => m.body.message_id === id);
  return id;
}

test('a play carries queued_at, expires_at TTL seconds later and its priority', async () => {
  const w = await makeWorld(db, clock);
  const { device } = await comeOnline(w);
  try {
    const id = await play(w, 'Spill in aisle 3.');
    const m = await device.next((r) => r.body.message_id === id);
    assert.equal(m.body.priority, 'normal');
    const queued = Date.parse(String(m.body.queued_at));
    assert.equal(Date.parse(String(m.body.expires_at)) - queued, 120_000);
    assert.match(String(m.body.expires_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  } finally {
    await device.end();
  }
});

test('a message that expires while its edge device is offline is never sent to it, with an expired event', async () => {
  const w = await makeWorld(db, clock);
  const late = await play(w, 'Cleanup needed in aisle 5.');
  clock.advance(60_000);
  const fresh = await play(w, 'Price check at register 2.');
  clock.advance(61_000); // the first is now past its expires_at, the second is not
  assert.equal((await ctx.scheduler.runDue()) > 0, true);
  assert.deepEqual(await radioEvents(w, 'expired'), [late]);
  const { device, firstSeen } = await comeOnline(w);
  try {
    await device.next((m) => m.body.message_id === fresh);
    await sentinel(w, device);
    assert.ok(!firstSeen().includes(late), 'the expired message never arrives');
    // Past the second one's expiry too, a reconnection brings nothing of either.
    clock.advance(120_000);
    await ctx.scheduler.runDue();
    assert.equal(await devices.redeliverTo(`radio/${w.edgeId}/play`), 0);
  } finally {
    await device.end();
  }
});

test('urgent messages go out before normal ones queued earlier', async () => {
  const w = await makeWorld(db, clock);
  const a = await play(w, 'First normal.');
  const b = await play(w, 'Second normal.');
  const urgent = await play(w, 'Urgent: customer waiting at the paint counter.', 'urgent');
  const { device, firstSeen } = await comeOnline(w);
  try {
    await device.next((m) => m.body.message_id === b);
    assert.deepEqual(firstSeen().slice(0, 3), [urgent, a, b]);
    const u = device.received.find((m) => m.body.message_id === urgent);
    assert.equal(u?.body.priority, 'urgent');
  } finally {
    await device.end();
  }
});

test('beyond RADIO_QUEUE_LIMIT unplayed messages the oldest normal one is dropped, with a dropped event', async () => {
  const w = await makeWorld(db, clock);
  const urgent = await play(w, 'Urgent one.', 'urgent');
  const ids = [urgent];
  for (let i = 1; i <= 5; i++) ids.push(await play(w, `Announcement number ${i}.`));
  // Six queued, the bound is four: the two oldest normal ones go, the urgent one stays.
  assert.deepEqual(await radioEvents(w, 'dropped'), [ids[1], ids[2]]);
  const { device, firstSeen } = await comeOnline(w);
  try {
    await device.next((m) => m.body.message_id === ids[5]);
    await sentinel(w, device);
    const seen = firstSeen();
    assert.ok(!seen.includes(ids[1]!) && !seen.includes(ids[2]!), 'dropped ones never arrive');
    assert.deepEqual(seen.slice(0, 4), [urgent, ids[3], ids[4], ids[5]]);
  } finally {
    await device.end();
  }
});

test('the same text on the same edge device within 10 s is one announcement; later it is another', async () => {
  const w = await makeWorld(db, clock);
  const first = await play(w, 'Carry out needed at register 4.');
  clock.advance(9_000);
  assert.equal(await play(w, 'Carry out needed at register 4.'), first);
  assert.deepEqual(await radioEvents(w, 'duplicate'), [first]);
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1', [`radio/${w.edgeId}/play`]);
  assert.equal(row?.n, 1);
  clock.advance(2_000);
  assert.notEqual(await play(w, 'Carry out needed at register 4.'), first);
});

test('concurrent identical plays are one announcement', async () => {
  const w = await makeWorld(db, clock);
  const ids = await Promise.all([1, 2, 3].map(() => play(w, 'Team huddle at the front in five minutes.')));
  assert.equal(new Set(ids).size, 1);
});
