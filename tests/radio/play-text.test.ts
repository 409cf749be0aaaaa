// R1 playRadioText: credentials, the play message with real speech in the outbox, limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { makeWorld, testApp } from '../support/world.ts';
import { assertSpeechWav } from './audio.ts';
import { anotherEdge, bearer, edgeKey, outboxCount, outboxPlay, playText, SENTENCE, tokenWithScopes } from './support.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;

test('the edge key plays the text: 200 with a message_id, and a WAV of speech queued on the edge topic', async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'Store manager' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<{ success: boolean; message_id: string }>();
  assert.equal(body.success, true);
  assert.match(body.message_id, /^[0-9a-f-]{36}$/);

  const play = await outboxPlay(db, body.message_id);
  assert.ok(play, 'a play message is in the outbox');
  assert.equal(play.topic, `radio/${w.edgeId}/play`);
  assert.equal(play.payload.message_id, body.message_id);
  assert.equal(play.payload.text, SENTENCE);
  assert.equal(play.payload.actor, 'Store manager');
  assert.equal(play.payload.mime, 'audio/wav');
  assert.equal(play.payload.queued_at, `${clock.now().toISOString().slice(0, 23)}000Z`);
  assertSpeechWav(play.audio);
});

test("a bearer token with the radio scope of the edge device's organization plays the text", async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, bearer(w.token), { edgeId: w.edgeId, text: SENTENCE, actor: 'chat-bot' });
  assert.equal(res.statusCode, 200, res.body);
  const play = await outboxPlay(db, res.json<{ message_id: string }>().message_id);
  assert.ok(play);
  assert.equal(play.topic, `radio/${w.edgeId}/play`);
  assertSpeechWav(play.audio);
});

test('the message is recorded with who asked, the text and the audio it made', async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, bearer(w.token), { edgeId: w.edgeId, text: SENTENCE, actor: 'chat-bot' });
  const id = res.json<{ message_id: string }>().message_id;
  const [row] = await db.query<Record<string, unknown>>('SELECT * FROM radio_messages WHERE message_id = $1', [id]);
  assert.ok(row);
  assert.equal(row.edge_id, w.edgeId);
  assert.equal(row.organization_id, w.organizationId);
  assert.equal(row.source, 'generic');
  assert.equal(row.credential, 'token');
  assert.equal(row.actor, 'chat-bot');
  assert.equal(row.text, SENTENCE);
  assert.equal(row.processed, false);
  assert.ok((row.duration_ms as number) > 1000);
  const play = await outboxPlay(db, id);
  assert.equal(row.audio_bytes, play?.audio.length);
});

test('every refused credential is 403 and queues nothing', async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  const sibling = await anotherEdge(db, clock, w);
  const cfhOnly = await tokenWithScopes(db, clock, w, ['cfh']);
  const revoked = await tokenWithScopes(db, clock, w, ['radio'], { revoked: true });
  const cases: [string, Record<string, string>][] = [
    ['no credential', {}],
    ['an unknown api-key', edgeKey('not-a-key-of-anything-at-all')],
    ['the key of another edge device of the same organization', edgeKey(sibling.edgeKey)],
    ["another organization's edge key", edgeKey(other.edgeKey)],
    ['a locker key', edgeKey(w.lockerKey)],
    ['an unknown bearer token', bearer('not-a-token-of-anything-at-all')],
    ['a token without the radio scope', bearer(cfhOnly)],
    ['a revoked token', bearer(revoked)],
    ["another organization's token", bearer(other.token)],
    ['a malformed authorization header', { authorization: `Token ${w.token}` }],
  ];
  for (const [name, headers] of cases) {
    const res = await playText(app, headers, { edgeId: w.edgeId, text: SENTENCE, actor: 'x' });
    assert.equal(res.statusCode, 403, `${name}: ${res.body}`);
    assert.equal(typeof res.json<{ message: string }>().message, 'string');
  }
  assert.equal(res403Code(await playText(app, bearer(cfhOnly), { edgeId: w.edgeId, text: SENTENCE, actor: 'x' })), 'insufficient_scope');
  assert.equal(await outboxCount(db, w.edgeId), 0);
});

function res403Code(res: { json: <T>() => T }): string {
  return res.json<{ code: string }>().code;
}

test('an api-key header decides alone: a bad key is refused even with a good token', async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, { ...edgeKey('wrong-key-wrong-key'), ...bearer(w.token) }, { edgeId: w.edgeId, text: SENTENCE, actor: 'x' });
  assert.equal(res.statusCode, 403);
});

test('an unknown edge device is 404 to a valid token, and 403 to a caller without a valid credential', async () => {
  const w = await makeWorld(db, clock);
  const body = { edgeId: 'no-such-edge-device', text: SENTENCE, actor: 'x' };
  assert.equal((await playText(app, bearer(w.token), body)).statusCode, 404);
  assert.equal((await playText(app, {}, body)).statusCode, 403);
  assert.equal((await playText(app, bearer('invalid-token-invalid'), body)).statusCode, 403);
  // An edge device's key is good for its own edge device only: it learns nothing of others.
  assert.equal((await playText(app, edgeKey(w.edgeKey), body)).statusCode, 403);
});

test('a caller without a credential gets 403 even for a malformed body', async () => {
  const res = await playText(app, {}, { text: 42 });
  assert.equal(res.statusCode, 403);
});

test('text over the limit is 422 naming the field, and nothing is queued', async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'a'.repeat(501), actor: 'x' });
  assert.equal(res.statusCode, 422);
  const body = res.json<{ code: string; errors: Record<string, string[]> }>();
  assert.equal(body.code, 'validation_failed');
  assert.ok(body.errors.text, 'errors.text is given');
  assert.equal(await outboxCount(db, w.edgeId), 0);
  // The limit itself is accepted.
  const atLimit = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: `${'Aisle five. '.repeat(50)}`.slice(0, 500), actor: 'x' });
  assert.equal(atLimit.statusCode, 200, atLimit.body);
});

test('missing fields, wrong types and blank text are 422', async () => {
  const w = await makeWorld(db, clock);
  const bodies: Record<string, unknown>[] = [
    { text: SENTENCE, actor: 'x' },
    { edgeId: w.edgeId, actor: 'x' },
    { edgeId: w.edgeId, text: SENTENCE },
    { edgeId: w.edgeId, text: '   ', actor: 'x' },
    { edgeId: w.edgeId, text: SENTENCE, actor: 'x', process: 'yes' },
  ];
  for (const body of bodies) {
    const res = await playText(app, edgeKey(w.edgeKey), body);
    assert.equal(res.statusCode, 422, JSON.stringify(body));
  }
});

test('text that tries SSML markup is spoken as text, not obeyed', async () => {
  const w = await makeWorld(db, clock);
  const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Hello <break time="20s"/> there &amp; <speak>friends</speak>', actor: 'x' });
  assert.equal(res.statusCode, 200, res.body);
  const play = await outboxPlay(db, res.json<{ message_id: string }>().message_id);
  assert.ok(play);
  const wav = assertSpeechWav(play.audio);
  assert.ok(wav.seconds < 15, `no twenty-second break (${wav.seconds.toFixed(1)} s)`);
});

test('a provisioned edge device of another location of the same organization is usable by its token', async () => {
  const w = await makeWorld(db, clock);
  const locationId = w.locationId + 500_000;
  await applyProvisioning(db, clock, {
    locations: [{ id: locationId, organization_id: w.organizationId, name: 'Second store' }],
    radio_edges: [{ edge_id: `edge-loc-${locationId}`, location_id: locationId, name: 'Radio', device_key: 'second-store-edge-key-123' }],
  });
  const res = await playText(app, bearer(w.token), { edgeId: `edge-loc-${locationId}`, text: SENTENCE, actor: 'x' });
  assert.equal(res.statusCode, 200, res.body);
});
