// The speech synthesizer: bounded in queue and time. The bounds are shown on eSpeak NG's worker
// pool (the same bounds hold for every engine: speech-engines.test.ts shows each engine speaking).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  createSpeechSynthesizer,
  SpeechBusyError,
  SpeechInputError,
  SpeechTimeoutError,
  SpeechUnavailableError,
  type SpeechSynthesizer,
} from '../../src/radio/speech/speech.ts';
import { makeWorld, testApp, testSpeech } from '../support/world.ts';
import { assertSpeechWav, parseWav } from './audio.ts';
import { edgeKey, outboxCount, playText, SENTENCE } from './support.ts';

const shared = testSpeech();

const LONG = 'Attention shoppers, the store will close in fifteen minutes. Please bring your purchases to the front registers. '.repeat(5);

async function withSynthesizer<T>(opts: Parameters<typeof createSpeechSynthesizer>[0], fn: (s: SpeechSynthesizer) => Promise<T>): Promise<T> {
  const speech = createSpeechSynthesizer({ engines: ['espeak-ng'], ...opts });
  try {
    await speech.ready();
    return await fn(speech);
  } finally {
    await speech.close();
  }
}

test('a sentence becomes a 16,000 Hz 16-bit mono WAV of speech', async () => {
  assertSpeechWav(await shared.synthesize(SENTENCE));
});

test('synthesis runs off the event loop: timers keep firing while a long text is spoken', async () => {
  const speech = shared;
  await speech.ready();
  let done = false;
  const pending = speech.synthesize(LONG).finally(() => {
    done = true;
  });
  let turns = 0;
  while (!done) {
    await nextTurn();
    turns++;
  }
  assert.ok(turns > 1, `the event loop turned ${turns} times during the synthesis`);
  assert.ok(parseWav(await pending).seconds > 20);
});

test('concurrent syntheses all complete, each its own text', async () => {
  const speech = shared;
  const texts = ['One.', 'Two and two.', 'Three and three and three.', 'Four, four, four and four.', 'Five.', 'Six and six.'];
  const wavs = await Promise.all(texts.map((t) => speech.synthesize(t)));
  const seconds = wavs.map((w) => parseWav(w).seconds);
  for (const wav of wavs) assert.equal(parseWav(wav).sampleRate, 16_000);
  // Each answer is its own text's: audio grows with the text it was asked for.
  assert.ok(seconds[0]! < seconds[1]! && seconds[1]! < seconds[2]! && seconds[2]! < seconds[3]!, seconds.join(' < '));
  assert.ok(seconds[4]! < seconds[5]!, seconds.join(', '));
});

test('when the queue is full a request is refused at once with a retry delay, and the rest still complete', async () => {
  await withSynthesizer({ workers: 1, queueLimit: 1 }, async (speech) => {
    const running = speech.synthesize(LONG);
    const queued = speech.synthesize(LONG);
    const refused = await speech.synthesize(SENTENCE).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof SpeechBusyError, String(refused));
    assert.ok(refused.retryAfterSeconds >= 1);
    assert.ok(parseWav(await running).seconds > 20);
    assert.ok(parseWav(await queued).seconds > 20);
    assertSpeechWav(await speech.synthesize(SENTENCE));
  });
});

test('a synthesis over its time limit is abandoned, and the engine serves the next one', async () => {
  await withSynthesizer({ workers: 1, timeoutMs: 1 }, async (speech) => {
    await assert.rejects(speech.synthesize(LONG), SpeechTimeoutError);
  });
  await withSynthesizer({ workers: 1, maxAudioSeconds: 2 }, async (speech) => {
    await assert.rejects(speech.synthesize(LONG), (err) => err instanceof SpeechInputError && err.reason === 'too_long');
    assertSpeechWav(await speech.synthesize('Thank you for shopping.'));
  });
});

test('an unknown voice or blank text is refused as input; a known voice speaks', async () => {
  const speech = shared;
  await assert.rejects(speech.synthesize(SENTENCE, 'no-such-voice'), (err) => err instanceof SpeechInputError && err.reason === 'unknown_voice');
  await assert.rejects(speech.synthesize('   '), (err) => err instanceof SpeechInputError && err.reason === 'empty');
  assertSpeechWav(await speech.synthesize('Bonjour à tous, le magasin ferme bientôt.', 'fr'));
});

test('a closed synthesizer refuses work instead of hanging', async () => {
  const speech = createSpeechSynthesizer({ workers: 1, engines: ['espeak-ng'] });
  await speech.ready();
  await speech.close();
  await assert.rejects(speech.synthesize(SENTENCE), SpeechUnavailableError);
});

test("over HTTP, an organization's full speech queue is 503 with Retry-After and queues nothing", async (t) => {
  await withSynthesizer({ workers: 1, queueLimit: 2 }, async (speech) => {
    const { app, db, clock } = await testApp({ t, speech });
    const w = await makeWorld(db, clock);
    // One long text speaking and two waiting, all of this organization: its queue is full for a good while.
    const busy = [1, 2, 3].map((i) => playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: `${i}. ${LONG.slice(0, 480)}`, actor: 'x' }));
    await waitForQueue(speech, w.organizationId);
    const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'x' });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json<{ code: string }>().code, 'speech_busy');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    for (const done of await Promise.all(busy)) assert.equal(done.statusCode, 200, done.body);
    assert.equal(await outboxCount(db, w.edgeId), 3);
  });
});

test("one organization's burst never makes another organization's announcement fail: each waits its turn", async (t) => {
  await withSynthesizer({ workers: 1, queueLimit: 2 }, async (speech) => {
    const { app, db, clock } = await testApp({ t, speech });
    const noisy = await makeWorld(db, clock);
    const quiet = await makeWorld(db, clock);
    const burst = Array.from({ length: 8 }, (_, i) =>
      playText(app, edgeKey(noisy.edgeKey), { edgeId: noisy.edgeId, text: `${i}. ${LONG.slice(0, 480)}`, actor: 'x' }),
    );
    await waitForQueue(speech, noisy.organizationId);
    const res = await playText(app, edgeKey(quiet.edgeKey), { edgeId: quiet.edgeId, text: SENTENCE, actor: 'x' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await outboxCount(db, quiet.edgeId), 1);
    const codes = (await Promise.all(burst)).map((r) => r.statusCode);
    assert.ok(codes.includes(503), `the burst is refused beyond its own bound: ${codes.join(',')}`);
  });
});

/** Until the organization's syntheses fill its own queue (the requests are parsed and checked first). */
async function waitForQueue(speech: SpeechSynthesizer, organizationId: number | string): Promise<void> {
  for (let i = 0; i < 1000 && speech.waiting(`org:${organizationId}`) < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(speech.waiting(`org:${organizationId}`), 2);
}
