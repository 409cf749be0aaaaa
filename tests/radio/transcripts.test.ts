// R3 listRadioTranscripts (contract section 12): what an edge device played and heard, by time
// range, newest first, in pages; the audio of a played message for the console.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { TestDevice, waitUntil } from '../devices/device.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, provisionToken, testApp, type World } from '../support/world.ts';
import { assertSpeechWav } from './audio.ts';
import { bearer, edgeKey, playByEdge, playText } from './support.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;

interface Entry {
  kind: string;
  id: string;
  at: string;
  text: string;
  status: string;
  audio_url: string | null;
  speaker: string | null;
  source: string | null;
}
interface Page {
  transcripts: Entry[];
  next_cursor: string | null;
}

async function list(headers: Record<string, string>, query: string): Promise<{ status: number; body: Page & { code?: string } }> {
  const res = await app.inject({ url: `/api/radio/transcripts?${query}`, headers });
  return { status: res.statusCode, body: res.json() };
}

const play = (w: World, text: string) => playByEdge(app, w, { text, actor: 'Manager' });

async function hear(w: World, text: string, speaker: string): Promise<string> {
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  const heardId = crypto.randomUUID();
  try {
    await device.publish(`radio/${w.edgeId}/heard`, { heard_id: heardId, text, speaker, heard_at: clock.now().toISOString() });
    await waitUntil(async () => (await db.query("SELECT 1 FROM radio_heard WHERE heard_id = $1 AND outcome <> 'pending'", [heardId])).length > 0);
    await ctx.devices.settle();
  } finally {
    await device.end();
  }
  return heardId;
}

test('what was played and heard, newest first, each with what came of it; the audio of a played message', async () => {
  const w = await makeWorld(db, clock);
  const t0 = clock.now().toISOString();
  const a = await play(w, 'Cleanup in aisle 3.');
  clock.advance(60_000);
  const heard = await hear(w, 'is anyone on it?', 'Sam');
  clock.advance(60_000);
  const b = await play(w, 'Price check at register 2.');
  clock.advance(1_000);
  await ctx.scheduler.runDue(); // the first message is past its expiry now (nobody was listening)
  const res = await list(bearer(w.token), `edge_id=${w.edgeId}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const got = res.body.transcripts.map((e) => [e.kind, e.id, e.status]);
  assert.deepEqual(got, [
    ['played', b, 'queued'],
    ['heard', heard, 'disabled'],
    ['played', a, 'expired'],
  ]);
  assert.equal(res.body.next_cursor, null);
  const entry = res.body.transcripts[1];
  assert.equal(entry?.speaker, 'Sam');
  assert.equal(entry?.text, 'is anyone on it?');
  const audioUrl = res.body.transcripts[0]?.audio_url;
  assert.equal(audioUrl, `/api/radio/messages/${b}/audio`);
  const audio = await app.inject({ url: audioUrl ?? '', headers: bearer(w.token) });
  assert.equal(audio.statusCode, 200);
  assert.equal(audio.headers['content-type'], 'audio/wav');
  assertSpeechWav(audio.rawPayload);
  // Within a time range only.
  const range = await list(
    edgeKey(w.edgeKey),
    `edge_id=${w.edgeId}&from=${encodeURIComponent(t0)}&to=${encodeURIComponent(new Date(Date.parse(t0) + 90_000).toISOString())}`,
  );
  assert.deepEqual(
    range.body.transcripts.map((e) => e.id),
    [heard, a],
  );
});

test('pages of limit follow next_cursor without gaps or repeats', async () => {
  const w = await makeWorld(db, clock);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(await play(w, `Announcement ${i}.`));
    clock.advance(1_000);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(bearer(w.token), `edge_id=${w.edgeId}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(page.status, 200);
    assert.ok(page.body.transcripts.length <= 2);
    seen.push(...page.body.transcripts.map((e) => e.id));
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  assert.deepEqual(seen, ids.reverse());
});

test('bad ranges and cursors are 422; another edge key or no credential is 403; a token of another organization or limited to other locations is 404, as for no edge device', async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  await play(w, 'Hello store.');
  assert.equal((await list(bearer(w.token), `edge_id=${w.edgeId}&cursor=bm90LWEtY3Vyc29y`)).status, 422);
  assert.equal((await list(bearer(w.token), `edge_id=${w.edgeId}&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`)).status, 422);
  assert.equal((await list(bearer(w.token), `edge_id=${w.edgeId}&from=yesterday`)).status, 422);
  assert.equal((await list(bearer(w.token), 'limit=5')).status, 422);
  const secondStore = freshId();
  await applyProvisioning(db, clock, { locations: [{ id: secondStore, organization_id: w.organizationId, name: 'Second store' }] });
  const elsewhere = await provisionToken(db, clock, w.organizationId, ['radio'], { locationIds: [secondStore] });
  assert.equal((await list(bearer(elsewhere), `edge_id=${w.edgeId}`)).status, 404);
  const here = await provisionToken(db, clock, w.organizationId, ['radio'], { locationIds: [w.locationId] });
  assert.equal((await list(bearer(here), `edge_id=${w.edgeId}`)).status, 200);
  assert.equal((await list(edgeKey(other.edgeKey), `edge_id=${w.edgeId}`)).status, 403);
  assert.equal((await list({}, `edge_id=${w.edgeId}`)).status, 403);
  assert.equal((await list(bearer(other.token), `edge_id=${w.edgeId}`)).status, 404);
  // R1 with a token limited to other locations is refused with 403 (contract section 2 of R1).
  const r1 = await playText(app, bearer(elsewhere), { edgeId: w.edgeId, text: 'Not here.', actor: 'x' });
  assert.equal(r1.statusCode, 403);
});
