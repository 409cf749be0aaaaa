// Every engine's audio at the radio's one rate (SAMPLE_RATE). Engines that speak at another rate
// (eSpeak NG: 22,050 Hz; Festival's HTS voice: 48 kHz) are brought to it here: a low-pass (a
// windowed-sinc FIR at the new Nyquist) against aliasing, then linear interpolation.
import { SAMPLE_RATE } from './wav.ts';

const TAPS = 31;

function lowPass(samples: Int16Array, cutoff: number): Float32Array {
  const half = (TAPS - 1) / 2;
  const kernel = new Float32Array(TAPS);
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const n = i - half;
    const sinc = n === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * n) / (Math.PI * n);
    const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (TAPS - 1)); // Hamming
    kernel[i] = sinc * window;
    sum += kernel[i]!;
  }
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    let acc = 0;
    for (let k = 0; k < TAPS; k++) {
      const j = i + k - half;
      if (j >= 0 && j < samples.length) acc += samples[j]! * kernel[k]!;
    }
    out[i] = acc / sum;
  }
  return out;
}

/** The samples at SAMPLE_RATE (unchanged when they already are). */
export function toRadioRate(samples: Int16Array, fromRate: number): Int16Array {
  if (fromRate === SAMPLE_RATE || samples.length === 0) return samples;
  const ratio = fromRate / SAMPLE_RATE;
  const source = ratio > 1 ? lowPass(samples, 0.5 / ratio) : Float32Array.from(samples);
  const out = new Int16Array(Math.floor(samples.length / ratio));
  for (let i = 0; i < out.length; i++) {
    const x = i * ratio;
    const j = Math.floor(x);
    const frac = x - j;
    const a = source[j] ?? 0;
    const b = source[j + 1] ?? a;
    out[i] = Math.max(-32_768, Math.min(32_767, Math.round(a + (b - a) * frac)));
  }
  return out;
}
