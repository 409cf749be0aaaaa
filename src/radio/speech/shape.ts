// Every engine's speech made ready for a two-way radio, the same way for all of them: silence
// before the first word (a radio needs a moment after its key-up before it transmits, and a
// listener, or a recognizer, loses a first word that starts at once), silence after the last (the
// last word is not clipped at key-down), and one level: the loudest sample at LEVEL of full scale,
// so a quiet engine is not lost in the radio's noise and none clips.
import { SAMPLE_RATE } from './wav.ts';

/** Silence before the first word, milliseconds. */
export const LEAD_IN_MS = 300;
/** Silence after the last word, milliseconds. */
export const TAIL_MS = 200;
/** Peak level, as a share of full scale (about -1 dBFS). */
export const LEVEL = 0.89;

export function shapeForRadio(samples: Int16Array, sampleRate = SAMPLE_RATE): Int16Array {
  const lead = Math.round((LEAD_IN_MS * sampleRate) / 1000);
  const tail = Math.round((TAIL_MS * sampleRate) / 1000);
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const gain = peak === 0 ? 1 : (LEVEL * 32_767) / peak;
  const out = new Int16Array(lead + samples.length + tail);
  for (let i = 0; i < samples.length; i++) out[lead + i] = Math.max(-32_768, Math.min(32_767, Math.round(samples[i]! * gain)));
  return out;
}
