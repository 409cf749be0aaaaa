// The chime's notes end in silence: a note cut while still ringing is a click on the radio.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHIME_NOTES, chimeSamples } from '../../src/radio/chime.ts';
import { SAMPLE_RATE } from '../../src/radio/speech/wav.ts';

test('each note of the chime fades out to silence, so nothing clicks at its end', () => {
  const samples = chimeSamples(SAMPLE_RATE);
  const peak = Math.max(...Array.from(samples, Math.abs));
  let end = 0;
  for (const note of CHIME_NOTES) {
    end += Math.round(note.seconds * SAMPLE_RATE);
    const last = Math.abs(samples[end - 1] as number);
    assert.ok(last <= peak * 0.002, `the last sample of the ${note.hz} Hz note is ${last}, peak ${peak}`);
    // The last millisecond is already near silence, not a ringing tone cut short.
    const tail = Array.from(samples.subarray(end - Math.round(SAMPLE_RATE / 1000), end), Math.abs);
    assert.ok(Math.max(...tail) <= peak * 0.02, `the ${note.hz} Hz note still rings at ${Math.max(...tail)} in its last millisecond`);
  }
});
