// The voice handlers an edge device is provisioned with, run when a play asks for process: true.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, testApp } from '../support/world.ts';
import { assertSpeechWav, rms, toneShare } from './audio.ts';
import { bearer, edgeKey, outboxPlay, playText, SENTENCE, anotherEdge } from './support.ts';

const { app, db, clock } = await testApp();

async function play(headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await playText(app, headers, body);
  assert.equal(res.statusCode, 200, res.body);
  const id = res.json<{ message_id: string }>().message_id;
  const queued = await outboxPlay(db, id);
  assert.ok(queued);
  return { id, ...queued };
}

const PRICE_TEXT = 'Cleanup on aisle 5: $3.50 & 10% off item #42, see the Mgr.';
const PRICE_SPOKEN = 'Cleanup on aisle 5: 3 dollars 50 and 10 percent off item number 42, see the manager.';

test('normalize reads prices, percentages, symbols and abbreviations as words; the play carries what was spoken', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['normalize'] });
  const normalized = await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: PRICE_TEXT, actor: 'x', process: true });
  assert.equal(normalized.payload.text, PRICE_SPOKEN);
  assertSpeechWav(normalized.audio);
  const [row] = await db.query<{ text: string; spoken_text: string; handlers: string[] }>(
    'SELECT text, spoken_text, handlers FROM radio_messages WHERE message_id = $1',
    [normalized.id],
  );
  assert.deepEqual(row, { text: PRICE_TEXT, spoken_text: PRICE_SPOKEN, handlers: ['normalize'] });
});

test('process: false (the default) is plain synthesis, whatever handlers the edge device has', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['normalize', 'chime', 'transcript'] });
  for (const body of [{ process: false }, {}]) {
    const plain = await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: PRICE_TEXT, actor: 'x', ...body });
    assert.equal(plain.payload.text, PRICE_TEXT);
    assert.equal(toneShare(assertSpeechWav(plain.audio), 880, 0, 4000) < 0.3, true, 'no chime');
  }
  const list = await app.inject({ url: `/api/radio/edges/${w.edgeId}/transcripts`, headers: edgeKey(w.edgeKey) });
  assert.deepEqual(list.json<{ transcripts: unknown[] }>().transcripts, [], 'no transcript kept');
});

test('process: true on an edge device without handlers is plain synthesis', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: [] });
  const p = await play(bearer(w.token), { edgeId: w.edgeId, text: PRICE_TEXT, actor: 'x', process: true });
  assert.equal(p.payload.text, PRICE_TEXT);
});

test('chime puts a generated two-note tone before the speech, so the audio is longer and starts with the tone', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['chime'] });
  const plain = assertSpeechWav((await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'x', process: false })).audio);
  clock.advance(11_000); // the same text again within 10 s would be the same announcement
  const chimed = assertSpeechWav((await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'x', process: true })).audio);
  assert.ok(chimed.seconds > plain.seconds + 0.8, `longer by the chime (${plain.seconds.toFixed(2)} s -> ${chimed.seconds.toFixed(2)} s)`);
  const window = (from: number, to: number) => [Math.round(from * 16_000), Math.round(to * 16_000)] as const;
  // First note (880 Hz), then second (659.25 Hz): each dominates its stretch.
  assert.ok(rms(chimed.samples, ...window(0, 0.2)) > 2_000, 'loud from the start');
  assert.ok(toneShare(chimed, 880, ...window(0.01, 0.2)) > 0.6, `880 Hz first (${toneShare(chimed, 880, ...window(0.01, 0.2)).toFixed(2)})`);
  assert.ok(toneShare(chimed, 659.25, ...window(0.36, 0.6)) > 0.6, '659 Hz second');
  // The same measure over the plain speech finds no such tone.
  assert.ok(toneShare(plain, 880, ...window(0.01, 0.2)) < 0.3, 'speech alone does not start with the tone');
});

test("transcript keeps the text and the audio, listable and playable by the edge device and its organization's token", async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['normalize', 'chime', 'transcript'] });
  const first = await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Price check on register 3', actor: 'Cashier', process: true });
  clock.advance(1_000);
  const second = await play(bearer(w.token), { edgeId: w.edgeId, text: PRICE_TEXT, actor: 'chat-bot', process: true });

  for (const headers of [edgeKey(w.edgeKey), bearer(w.token)]) {
    const res = await app.inject({ url: `/api/radio/edges/${w.edgeId}/transcripts`, headers });
    assert.equal(res.statusCode, 200, res.body);
    const { transcripts, next_before } = res.json<{ transcripts: Record<string, unknown>[]; next_before: string | null }>();
    assert.equal(next_before, null);
    assert.deepEqual(
      transcripts.map((t) => t.message_id),
      [second.id, first.id],
      'newest first',
    );
    const t = transcripts[0];
    assert.ok(t);
    assert.equal(t.text, PRICE_TEXT);
    assert.equal(t.spoken_text, PRICE_SPOKEN);
    assert.equal(t.actor, 'chat-bot');
    assert.equal(t.source, 'generic');
    assert.deepEqual(t.handlers, ['normalize', 'chime', 'transcript']);
    assert.equal(t.mime, 'audio/wav');
    assert.equal(typeof t.created_at, 'string');

    const audio = await app.inject({ url: t.audio_url as string, headers });
    assert.equal(audio.statusCode, 200);
    assert.equal(audio.headers['content-type'], 'audio/wav');
    assert.deepEqual(audio.rawPayload, second.audio, 'the audio kept is the audio played');
    assertSpeechWav(audio.rawPayload);
  }
});

test('transcripts page with limit and before', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['transcript'] });
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    ids.unshift((await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: `Announcement number ${n}.`, actor: 'x', process: true })).id);
  }
  const url = `/api/radio/edges/${w.edgeId}/transcripts`;
  const page1 = (await app.inject({ url: `${url}?limit=2`, headers: edgeKey(w.edgeKey) })).json<{
    transcripts: { message_id: string }[];
    next_before: string;
  }>();
  assert.deepEqual(
    page1.transcripts.map((t) => t.message_id),
    ids.slice(0, 2),
  );
  const page2 = (await app.inject({ url: `${url}?limit=2&before=${page1.next_before}`, headers: edgeKey(w.edgeKey) })).json<{
    transcripts: { message_id: string }[];
    next_before: string | null;
  }>();
  assert.deepEqual(
    page2.transcripts.map((t) => t.message_id),
    ids.slice(2),
  );
  assert.equal(page2.next_before, null);
  assert.equal((await app.inject({ url: `${url}?before=not-a-message`, headers: edgeKey(w.edgeKey) })).statusCode, 422);
  assert.equal((await app.inject({ url: `${url}?limit=0`, headers: edgeKey(w.edgeKey) })).statusCode, 422);
});

test('transcripts are refused to other edge devices, other organizations and callers without the radio scope', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['transcript'] });
  const other = await makeWorld(db, clock, { voiceHandlers: ['transcript'] });
  const sibling = await anotherEdge(db, clock, w, ['transcript']);
  const kept = await play(edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'x', process: true });
  const list = `/api/radio/edges/${w.edgeId}/transcripts`;
  const audio = `${list}/${kept.id}/audio`;
  for (const url of [list, audio]) {
    for (const headers of [{}, edgeKey(sibling.edgeKey), edgeKey(other.edgeKey), bearer(other.token), bearer('no-such-token-at-all')]) {
      assert.equal((await app.inject({ url, headers })).statusCode, 403, `${url} ${JSON.stringify(headers)}`);
    }
  }
  // Another edge device's own transcript list does not show this one's, nor serve its audio.
  const siblingList = await app.inject({ url: `/api/radio/edges/${sibling.edgeId}/transcripts`, headers: edgeKey(sibling.edgeKey) });
  assert.deepEqual(siblingList.json<{ transcripts: unknown[] }>().transcripts, []);
  assert.equal(
    (await app.inject({ url: `/api/radio/edges/${sibling.edgeId}/transcripts/${kept.id}/audio`, headers: edgeKey(sibling.edgeKey) })).statusCode,
    404,
  );
  assert.equal((await app.inject({ url: '/api/radio/edges/no-such-edge/transcripts', headers: bearer(w.token) })).statusCode, 404);
});
