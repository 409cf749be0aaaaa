// A play's WAV is stored once (radio_audio): the outbox row refers to it, and the dispatcher puts it
// back in the play message when it publishes, the first time and again, so the edge device
// receives what it always has. Rows queued with the audio in their payload still go out as they are.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { enqueueDeviceMessage } from '../../src/devices/outbox.ts';
import type { Db } from '../../src/db/db.ts';
import { freshDb, freshId, makeWorld, testApp, TEST_MQTT_URL, type World } from '../support/world.ts';
import { byKey, TestDevice } from '../devices/device.ts';
import { assertSpeechWav } from './audio.ts';
import { edgeKey, playByEdge, playText, SENTENCE } from './support.ts';

const ctx = await testApp();
const { app, db, clock, devices } = ctx;

const PLAY_FIELDS = ['actor', 'audio', 'expires_at', 'message_id', 'mime', 'priority', 'queued_at', 'text'];

/** An edge device listening on its play topic, keeping the raw bytes of every message. */
async function listeningEdge(w: World): Promise<{ device: TestDevice; raw: Buffer[] }> {
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  const raw: Buffer[] = [];
  device.client.on('message', (_topic, payload) => raw.push(payload));
  assert.equal(await device.subscribe(`radio/${w.edgeId}/play`), 1);
  return { device, raw };
}

const rawOf = (raw: Buffer[], key: string) => raw.filter((b) => b.toString('utf8').includes(`"message_id":"${key}"`));

const play = (w: World, process = false) => playByEdge(app, w, { text: SENTENCE, actor: 'Store manager', process });

test('the WAV of a play is stored once, in radio_audio; the outbox row refers to it and the edge device receives it', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['transcript'] });
  const { device } = await listeningEdge(w);
  try {
    const id = await play(w, true);
    const stored = await db.query<{ wav: Buffer }>('SELECT wav FROM radio_audio WHERE message_id = $1', [id]);
    assert.equal(stored.length, 1, 'one copy');
    const wav = stored[0]?.wav ?? Buffer.alloc(0);
    assertSpeechWav(wav);

    const [queued] = await db.query<{ payload: Record<string, unknown>; audio_message_id: string | null }>(
      'SELECT payload, audio_message_id FROM device_outbox WHERE message_key = $1',
      [id],
    );
    assert.ok(queued);
    assert.deepEqual(
      Object.keys(queued.payload).sort(),
      PLAY_FIELDS.filter((f) => f !== 'audio'),
      'no audio in the payload',
    );
    assert.equal(queued.audio_message_id, id);
    const [transcript] = await db.query<Record<string, unknown>>('SELECT * FROM radio_transcripts WHERE message_id = $1', [id]);
    assert.ok(transcript);
    assert.ok(!Object.values(transcript).some((v) => Buffer.isBuffer(v)), 'no audio in the transcript row');

    await devices.dispatchPending();
    const message = await device.next(byKey(id));
    assert.deepEqual(Object.keys(message.body).sort(), PLAY_FIELDS);
    assert.equal(message.body.mime, 'audio/wav');
    assert.equal(message.body.text, SENTENCE);
    assert.deepEqual(Buffer.from(message.body.audio as string, 'base64'), wav, 'the stored WAV, as played');

    const audio = await app.inject({ url: `/api/radio/edges/${w.edgeId}/transcripts/${id}/audio`, headers: edgeKey(w.edgeKey) });
    assert.equal(audio.statusCode, 200);
    assert.deepEqual(audio.rawPayload, wav, 'the transcript serves the same one copy');
  } finally {
    await device.end();
  }
});

test('a redelivery carries the audio too, byte for byte the first publish', async () => {
  const w = await makeWorld(db, clock);
  const topic = `radio/${w.edgeId}/play`;
  const first = await listeningEdge(w);
  let id: string;
  try {
    id = await play(w);
    await devices.dispatchPending();
    await first.device.next(byKey(id)); // and never acked
  } finally {
    await first.device.end();
  }
  const back = await listeningEdge(w);
  try {
    // The embedded broker tells the service the device is listening; an external one may not.
    if (TEST_MQTT_URL !== null) assert.equal(await devices.redeliverTo(topic), 1);
    await devices.settle();
    const again = await back.device.next(byKey(id));
    assertSpeechWav(Buffer.from(again.body.audio as string, 'base64'));
    const [once] = rawOf(first.raw, id);
    const [twice] = rawOf(back.raw, id);
    assert.ok(once !== undefined && twice !== undefined);
    assert.deepEqual(twice, once);
  } finally {
    await back.device.end();
  }
});

test('a play queued with its audio in the payload (before the audio was stored apart) is published unchanged', async () => {
  const w = await makeWorld(db, clock);
  const { device, raw } = await listeningEdge(w);
  try {
    const id = await play(w);
    const [stored] = await db.query<{ wav: Buffer; payload: Record<string, unknown> }>(
      'SELECT a.wav, d.payload FROM device_outbox d JOIN radio_audio a ON a.message_id = d.audio_message_id WHERE d.message_key = $1',
      [id],
    );
    assert.ok(stored);
    // As R1 queued it before: the same message, the WAV in base64 inside the payload, no reference.
    const oldKey = crypto.randomUUID();
    const oldPayload = { ...stored.payload, message_id: oldKey, audio: stored.wav.toString('base64') };
    await db.tx((q) => enqueueDeviceMessage(q, { topic: `radio/${w.edgeId}/play`, payload: oldPayload, key: oldKey }, clock.now()));

    await devices.dispatchPending();
    const old = await device.next(byKey(oldKey));
    assert.deepEqual(old.body, oldPayload, 'published as stored');
    await device.next(byKey(id));
    const [oldBytes] = rawOf(raw, oldKey);
    const [newBytes] = rawOf(raw, id);
    assert.ok(oldBytes !== undefined && newBytes !== undefined);
    assert.equal(newBytes.toString('utf8'), oldBytes.toString('utf8').replace(oldKey, id), 'the same JSON either way, field order included');
  } finally {
    await device.end();
  }
});

/** An organization with an edge device, written as the schema of migration 6 had them
 * (provisioning writes the newest schema). */
async function worldOfVersion6(db: Db): Promise<{ organizationId: number; edgeId: string }> {
  const [organizationId, locationId] = [freshId(), freshId()];
  const edgeId = `edge-${locationId}`;
  await db.query("INSERT INTO organizations (id, name) VALUES ($1, 'Org')", [organizationId]);
  await db.query("INSERT INTO locations (id, organization_id, name) VALUES ($1, $2, 'Store')", [locationId, organizationId]);
  await db.query("INSERT INTO radio_edges (edge_id, organization_id, location_id, name, device_key_hash) VALUES ($1, $2, $3, 'Radio', $4)", [
    edgeId,
    organizationId,
    locationId,
    crypto.randomBytes(32).toString('hex'),
  ]);
  return { organizationId, edgeId };
}

test('the migration moves the audio of existing transcripts into radio_audio and leaves queued payloads as they are', async () => {
  const fresh = await freshDb();
  try {
    await migrate(
      fresh,
      readMigrations().filter((m) => m.version <= 6),
    );
    const w = await worldOfVersion6(fresh);
    const id = crypto.randomUUID();
    const wav = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt some audio bytes', 'latin1');
    await fresh.query(
      `INSERT INTO radio_messages (message_id, edge_id, organization_id, source, actor, text, spoken_text, processed, handlers,
         credential, audio_bytes, duration_ms, created_at)
       VALUES ($1, $2, $3, 'generic', 'x', 'hello', 'hello', true, '{transcript}', 'edge_key', $4, 1000, $5)`,
      [id, w.edgeId, w.organizationId, wav.length, clock.now()],
    );
    await fresh.query('INSERT INTO radio_transcripts (message_id, edge_id, audio, created_at) VALUES ($1, $2, $3, $4)', [id, w.edgeId, wav, clock.now()]);
    const payload = { message_id: id, text: 'hello', actor: 'x', mime: 'audio/wav', audio: wav.toString('base64'), queued_at: clock.now().toISOString() };
    await fresh.query('INSERT INTO device_outbox (topic, payload, message_key) VALUES ($1, $2, $3)', [`radio/${w.edgeId}/play`, payload, id]);

    assert.deepEqual(
      await migrate(fresh),
      readMigrations()
        .filter((m) => m.version > 6)
        .map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`),
    );
    const [moved] = await fresh.query<{ wav: Buffer }>('SELECT wav FROM radio_audio WHERE message_id = $1', [id]);
    assert.deepEqual(moved?.wav, wav);
    const [transcript] = await fresh.query<Record<string, unknown>>('SELECT * FROM radio_transcripts WHERE message_id = $1', [id]);
    assert.equal(transcript?.audio, undefined, 'the transcript no longer holds a copy');
    const [queued] = await fresh.query<{ payload: unknown; audio_message_id: string | null }>(
      'SELECT payload, audio_message_id FROM device_outbox WHERE message_key = $1',
      [id],
    );
    assert.deepEqual(queued, { payload, audio_message_id: null });
  } finally {
    await fresh.close();
  }
});

test('the bytes stored per play: its WAV, 32,000 bytes a second of 16 kHz 16-bit mono and a 44-byte header, once; the longest R1 stays under 2 MB', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['transcript'] });
  const stored = async (id: string) => {
    const [row] = await db.query<{ wav: number; seconds: number; payload: number; transcript: number }>(
      `SELECT octet_length(a.wav)::int AS wav, m.duration_ms / 1000.0 AS seconds,
         (SELECT coalesce(sum(octet_length(o.payload::text)), 0)::int FROM device_outbox o WHERE o.message_key = a.message_id) AS payload,
         (SELECT coalesce(sum(octet_length(t::text)), 0)::int FROM radio_transcripts t WHERE t.message_id = a.message_id) AS transcript
       FROM radio_audio a JOIN radio_messages m ON m.message_id = a.message_id WHERE a.message_id = $1`,
      [id],
    );
    assert.ok(row);
    return row;
  };
  const short = await stored(await play(w));
  assert.ok(Math.abs(short.wav - (44 + 32_000 * Number(short.seconds))) <= 64, `${short.wav} bytes for ${short.seconds} s`);
  assert.ok(short.payload < 2_000 && short.transcript < 2_000, 'the other rows hold text, not audio');
  const words = 'Attention shoppers, the store will close in fifteen minutes, please bring your purchases to the front. ';
  const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: words.repeat(5).slice(0, 500), actor: 'Store manager' });
  assert.equal(res.statusCode, 200, res.body);
  const longest = await stored(res.json<{ message_id: string }>().message_id);
  assert.ok(longest.wav < 2_000_000, `${longest.wav} bytes`);
  // Audio past the longest an announcement may be is refused, never stored.
  const digits = Array.from({ length: 240 }, (_, i) => String(i % 10)).join(' ');
  const tooLong = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: digits, actor: 'Store manager' });
  assert.equal(tooLong.statusCode, 422, tooLong.body);
  assert.equal(tooLong.json<{ code: string }>().code, 'text_too_long');
});
