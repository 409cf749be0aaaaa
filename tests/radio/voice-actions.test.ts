// Voice actions (contract section 12): an edge device publishes what it heard on
// radio/<edge_id>/heard; the service records it (R3) with a speech_detected event and, with
// voice_actions, claims or marks on the way the request the phrase names, else the oldest open
// one, as the speaker from the radio, and says so on the air.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { TestDevice, waitUntil } from '../devices/device.ts';
import { freshId, makeWorld, testApp, TEST_MQTT_URL, type World } from '../support/world.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;
await ctx.events.runPending(); // the radio's subscribers start at the end of the log

interface Heard {
  outcome: string;
  intent: string;
  cfh_request_id: number | null;
  reply_message_id: string | null;
  text: string;
}

async function voiceWorld(opts: { voiceActions?: boolean; language?: 'fr' } = {}): Promise<World & { paintOptionId: number }> {
  const w = await makeWorld(db, clock);
  const paintOptionId = freshId();
  await applyProvisioning(db, clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, language: opts.language ?? null }],
    cfh_options: [
      {
        id: paintOptionId,
        organization_id: w.organizationId,
        location_id: w.locationId,
        text_en: 'Paint counter',
        text_fr: 'Comptoir peinture',
        prompt_en: 'Paint help',
        prompt_fr: 'Peinture',
      },
    ],
    radio_edges: [{ edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, voice_actions: opts.voiceActions ?? true }],
  });
  return { ...w, paintOptionId };
}

async function request(w: World, optionId = w.optionId): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: optionId },
  });
  assert.equal(res.statusCode, 201, res.body);
  clock.advance(1_000); // oldest first means something
  return res.json<{ message_id: string }>().message_id;
}

/** The radio's subscribers have read every event so far. */
async function caughtUp(): Promise<void> {
  await ctx.events.runPending();
  await waitUntil(async () => {
    const [row] = await db.query<{ behind: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM events e, event_cursors c WHERE c.subscriber = 'radio-requests' AND e.type = 'callforhelp'
         AND (e.tx_id, e.id) > (c.tx_id, c.event_id)) AS behind`,
    );
    if (row?.behind === true) await ctx.events.runPending();
    return row?.behind !== true;
  });
}

async function say(w: World, body: unknown, device?: TestDevice): Promise<Heard | null> {
  const edge = device ?? (await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey }));
  try {
    const given = typeof body === 'object' && body !== null && 'heard_id' in body ? (body as { heard_id: unknown }).heard_id : null;
    const heardId = typeof given === 'string' ? given : null;
    await edge.client.publishAsync(`radio/${w.edgeId}/heard`, typeof body === 'string' ? body : JSON.stringify(body), { qos: 1 });
    if (heardId === null) return null;
    let heard: Heard | undefined;
    await waitUntil(async () => {
      [heard] = await db.query<Heard>('SELECT outcome, intent, cfh_request_id, reply_message_id, text FROM radio_heard WHERE edge_id = $1 AND heard_id = $2', [
        w.edgeId,
        heardId,
      ]);
      return heard !== undefined && heard.outcome !== 'pending';
    });
    await ctx.devices.settle();
    return heard ?? null;
  } finally {
    if (device === undefined) await edge.end();
  }
}

const phrase = (text: string, speaker?: string) => ({
  heard_id: crypto.randomUUID(),
  text,
  ...(speaker ? { speaker } : {}),
  heard_at: clock.now().toISOString(),
});

async function stateOf(messageId: string): Promise<{ is_claimed: boolean; claimed_by: string | null; is_on_the_way: boolean }> {
  const [row] = await db.query<{ is_claimed: boolean; claimed_by: string | null; is_on_the_way: boolean }>(
    'SELECT is_claimed, claimed_by, is_on_the_way FROM cfh_requests WHERE message_id = $1',
    [messageId],
  );
  assert.ok(row);
  return row;
}

async function replyText(heard: Heard | null): Promise<string | null> {
  if (heard?.reply_message_id == null) return null;
  const [row] = await db.query<{ spoken_text: string }>('SELECT spoken_text FROM radio_messages WHERE message_id = $1', [heard.reply_message_id]);
  return row?.spoken_text ?? null;
}

test('"I\'m on it" claims the oldest open request as the speaker, from the radio, and the radio confirms it', async () => {
  const w = await voiceWorld();
  const oldest = await request(w);
  const newer = await request(w);
  await caughtUp();
  const heard = await say(w, phrase("I'm on it", 'Sam'));
  assert.equal(heard?.outcome, 'claimed');
  assert.deepEqual(await stateOf(oldest), { is_claimed: true, claimed_by: 'Sam', is_on_the_way: false });
  assert.equal((await stateOf(newer)).is_claimed, false);
  const [step] = await db.query<{ request_from: string }>(
    `SELECT e.request_from FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id WHERE r.message_id = $1 AND e.kind = 'claimed'`,
    [oldest],
  );
  assert.equal(step?.request_from, 'radio');
  assert.equal(await replyText(heard), 'Sam is on it: Help');
  const [event] = await db.query<{ details: { text: string; speaker: string } }>(
    "SELECT details FROM events WHERE type = 'radio' AND status = 'speech_detected' AND organization_id = $1",
    [w.organizationId],
  );
  assert.equal(event?.details.text, "I'm on it");
});

test('a phrase that names a request acts on that one; "on my way" then marks it on the way; without a speaker it is Radio', async () => {
  const w = await voiceWorld();
  const help = await request(w);
  const paint = await request(w, w.paintOptionId);
  await caughtUp();
  assert.equal((await say(w, phrase('I got the paint counter', 'Ann')))?.outcome, 'claimed');
  assert.deepEqual(await stateOf(paint), { is_claimed: true, claimed_by: 'Ann', is_on_the_way: false });
  assert.equal((await stateOf(help)).is_claimed, false);
  await caughtUp();
  const onTheWay = await say(w, phrase('heading over to the paint counter now', 'Ann'));
  assert.equal(onTheWay?.outcome, 'on_the_way');
  assert.equal((await stateOf(paint)).is_on_the_way, true);
  assert.equal(await replyText(onTheWay), 'Ann is on the way: Paint counter');
  await caughtUp();
  assert.equal((await say(w, phrase('on my way')))?.outcome, 'on_the_way');
  assert.deepEqual(await stateOf(help), { is_claimed: true, claimed_by: 'Radio', is_on_the_way: true });
});

test('questions and refusals do nothing; with nothing waiting the radio says so', async () => {
  const w = await voiceWorld();
  const open = await request(w);
  await caughtUp();
  for (const text of ['is anyone on it?', 'not me', "I can't get it", "he's on it"]) {
    assert.equal((await say(w, phrase(text, 'Sam')))?.outcome, 'none', text);
  }
  assert.equal((await stateOf(open)).is_claimed, false);
  const res = await app.inject({
    method: 'POST',
    url: '/api/callforhelp/cancel',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { message_id: open },
  });
  assert.equal(res.statusCode, 200);
  await caughtUp();
  const late = await say(w, phrase("I'm on it", 'Sam'));
  assert.equal(late?.outcome, 'nothing_waiting');
  assert.equal(await replyText(late), 'Nothing is waiting');
  assert.equal((await stateOf(open)).is_claimed, false, 'a closed request is not claimed');
});

test('an answer repeats at most a name of what was heard: a phrase naming a place of 1,800 characters gets a short answer', async () => {
  const w = await voiceWorld();
  await caughtUp();
  const place = 'Paint counter '.repeat(130); // about 1,800 characters, within what a heard message may carry
  const heard = await say(w, phrase(`I'm on it at the ${place}`, 'Sam'));
  assert.equal(heard?.outcome, 'nothing_waiting');
  const text = (await replyText(heard)) ?? '';
  assert.match(text, /^Nothing is waiting: paint counter/i);
  assert.ok(Array.from(text).length <= 'Nothing is waiting: '.length + 200, `${Array.from(text).length} characters said`);
});

test('an edge device without voice_actions records what it heard and does nothing', async () => {
  const w = await voiceWorld({ voiceActions: false });
  const open = await request(w);
  await caughtUp();
  assert.equal((await say(w, phrase("I'm on it", 'Sam')))?.outcome, 'disabled');
  assert.equal((await stateOf(open)).is_claimed, false);
});

test('malformed, too long or repeated heard messages are recorded or refused without effect, and the service goes on', async () => {
  const w = await voiceWorld();
  const open = await request(w);
  await caughtUp();
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  try {
    for (const body of ['not json', '[1,2]', 'null', '{"text":"I\'m on it"}', JSON.stringify({ heard_id: {}, text: "I'm on it" })]) {
      await say(w, body, device);
    }
    const long = await say(w, { ...phrase(`I'm on it ${'a'.repeat(2_000)}`, 'Sam') }, device);
    assert.equal(long?.outcome, 'invalid');
    assert.equal(long?.text.length, 2_000);
    assert.equal((await say(w, { heard_id: crypto.randomUUID(), text: 42 }, device))?.outcome, 'invalid');
    const again = phrase('is anyone on it?');
    await say(w, again, device);
    await say(w, again, device);
    const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM radio_heard WHERE edge_id = $1 AND heard_id = $2', [
      w.edgeId,
      again.heard_id,
    ]);
    assert.equal(count?.n, 1, 'a repeated heard_id is recorded once');
    assert.equal((await stateOf(open)).is_claimed, false);
  } finally {
    await device.end().catch(() => {});
  }
  // Still serving: a proper phrase is read and recorded.
  assert.equal((await say(w, phrase('who is on it', 'Sam')))?.outcome, 'none');
  assert.equal((await stateOf(open)).is_claimed, false);
});

test('in a French store the radio answers in French', async () => {
  const w = await voiceWorld({ language: 'fr' });
  await request(w, w.paintOptionId);
  await caughtUp();
  const heard = await say(w, phrase("I'm on it", 'Sam'));
  assert.equal(heard?.outcome, 'claimed');
  assert.equal(await replyText(heard), "Sam s'en occupe: Paint counter");
});

test(
  "a heard message on another edge device's topic is refused by the broker: nothing is recorded",
  { skip: TEST_MQTT_URL !== null && 'the external broker applies its own ACL (tests/devices: the auth endpoints)' },
  async () => {
    const w = await voiceWorld();
    const other = await voiceWorld();
    const open = await request(other);
    await caughtUp();
    const intruder = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
    const closed = intruder.closed();
    const foreign = phrase("I'm on it", 'Mallory');
    intruder.client.publish(`radio/${other.edgeId}/heard`, JSON.stringify(foreign), { qos: 1 });
    await closed;
    await ctx.devices.settle();
    const [none] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM radio_heard WHERE heard_id = $1', [foreign.heard_id]);
    assert.equal(none?.n, 0);
    assert.equal((await stateOf(open)).is_claimed, false);
  },
);

test('a phrase heard long before it arrives (an edge device that was away) is recorded as late and claims nothing', async () => {
  const w = await voiceWorld();
  const waiting = await request(w);
  await caughtUp();
  const heard = await say(w, { ...phrase("I'm on it", 'Sam'), heard_at: new Date(clock.now().getTime() - 10 * 60_000).toISOString() });
  assert.equal(heard?.outcome, 'late');
  assert.equal((await stateOf(waiting)).is_claimed, false);
});

test('a heard message left pending by a crash is acted on when the edge device brings it again; one being acted on is not acted on twice', async () => {
  const w = await voiceWorld();
  const waiting = await request(w);
  await caughtUp();
  const said = phrase("I'm on it", 'Sam');
  // The service recorded it, then stopped before acting on it (what a crash leaves).
  await db.query(
    `INSERT INTO radio_heard (edge_id, organization_id, location_id, heard_id, text, speaker, heard_at, received_at, intent, outcome, acting_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, 'claim', 'pending', $7)`,
    [w.edgeId, w.organizationId, w.locationId, said.heard_id, said.text, said.speaker, clock.now()],
  );
  // Brought again at once: another delivery may still be acting on it, so nothing is done twice.
  const edge = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  try {
    await edge.client.publishAsync(`radio/${w.edgeId}/heard`, JSON.stringify(said), { qos: 1 });
    await ctx.devices.settle();
    assert.equal((await stateOf(waiting)).is_claimed, false);
  } finally {
    await edge.end();
  }
  clock.advance(40_000);
  const heard = await say(w, said);
  assert.equal(heard?.outcome, 'claimed');
  assert.deepEqual(await stateOf(waiting), { is_claimed: true, claimed_by: 'Sam', is_on_the_way: false });
});
