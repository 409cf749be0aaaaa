// The "chime" voice handler: a two-note attention tone ("ding-dong") before the speech, generated
// here as samples, so there is no audio asset to ship or download.
import { SAMPLE_RATE } from './speech/wav.ts';

/** The notes of the chime, in Hz, and how long each rings, in seconds. */
export const CHIME_NOTES: readonly { hz: number; seconds: number }[] = [
  { hz: 880, seconds: 0.35 },
  { hz: 659.25, seconds: 0.5 },
];
const PAUSE_AFTER_SECONDS = 0.25;
const PEAK = 0.45 * 32_767;
const ATTACK_SECONDS = 0.005;
const DECAY_SECONDS = 0.18;
/** Each note fades to silence over its last few milliseconds: cut while still ringing, it clicked. */
const FADE_SECONDS = 0.02;

function bell(hz: number, seconds: number, sampleRate: number): Float64Array {
  const out = new Float64Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < out.length; i++) {
    const t = i / sampleRate;
    const envelope = Math.min(1, t / ATTACK_SECONDS, (out.length - 1 - i) / sampleRate / FADE_SECONDS) * Math.exp(-t / DECAY_SECONDS);
    // A few harmonics make it sound like a chime rather than a test tone.
    const wave = Math.sin(2 * Math.PI * hz * t) + 0.3 * Math.sin(4 * Math.PI * hz * t) + 0.1 * Math.sin(6 * Math.PI * hz * t);
    out[i] = (envelope * wave) / 1.4;
  }
  return out;
}

/** The chime and the pause after it, as 16-bit samples. */
export function chimeSamples(sampleRate: number = SAMPLE_RATE): Int16Array {
  const parts = CHIME_NOTES.map((n) => bell(n.hz, n.seconds, sampleRate));
  const pause = Math.round(PAUSE_AFTER_SECONDS * sampleRate);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0) + pause);
  let at = 0;
  for (const part of parts) {
    for (const v of part) out[at++] = Math.round(v * PEAK);
  }
  return out;
}

/** The speech with the chime in front, as samples: the WAV is encoded once, after every handler. */
export function withChime(speech: Int16Array, sampleRate: number): Int16Array {
  const chime = chimeSamples(sampleRate);
  const out = new Int16Array(chime.length + speech.length);
  out.set(chime, 0);
  out.set(speech, chime.length);
  return out;
}
