// An independent reader of WAV files for the radio tests (it walks RIFF chunks; it shares no code
// with the service's writer), and measures of what the samples sound like.
import assert from 'node:assert/strict';

export interface Wav {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  samples: Int16Array;
  seconds: number;
}

export function parseWav(buf: Buffer): Wav {
  assert.equal(buf.toString('ascii', 0, 4), 'RIFF', 'starts with RIFF');
  assert.equal(buf.readUInt32LE(4), buf.length - 8, 'RIFF size matches the file');
  assert.equal(buf.toString('ascii', 8, 12), 'WAVE', 'is WAVE');
  let at = 12;
  let fmt: Omit<Wav, 'samples' | 'seconds'> | null = null;
  let data: Buffer | null = null;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    const body = buf.subarray(at + 8, at + 8 + size);
    if (id === 'fmt ') {
      fmt = { format: body.readUInt16LE(0), channels: body.readUInt16LE(2), sampleRate: body.readUInt32LE(4), bitsPerSample: body.readUInt16LE(14) };
      assert.equal(body.readUInt32LE(8), fmt.sampleRate * fmt.channels * (fmt.bitsPerSample / 8), 'byte rate');
    } else if (id === 'data') {
      data = body;
    }
    at += 8 + size + (size % 2);
  }
  assert.ok(fmt !== null, 'has a fmt chunk');
  assert.ok(data !== null, 'has a data chunk');
  const samples = new Int16Array(data.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
  return { ...fmt, samples, seconds: samples.length / fmt.sampleRate };
}

export function rms(samples: Int16Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (samples[i] ?? 0) ** 2;
  return Math.sqrt(sum / Math.max(1, to - from));
}

export function peak(samples: Int16Array): number {
  let max = 0;
  for (const s of samples) max = Math.max(max, Math.abs(s));
  return max;
}

/** Share of 50 ms windows that are clearly not silence. */
export function voicedShare(wav: Wav): number {
  const size = Math.round(wav.sampleRate * 0.05);
  let voiced = 0;
  let windows = 0;
  for (let at = 0; at + size <= wav.samples.length; at += size) {
    windows++;
    if (rms(wav.samples, at, at + size) > 300) voiced++;
  }
  return voiced / Math.max(1, windows);
}

/** Share of the energy of samples[from, to) at `hz` (Goertzel), from 0 to 1. */
export function toneShare(wav: Wav, hz: number, from: number, to: number): number {
  const k = (2 * Math.PI * hz) / wav.sampleRate;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = from; i < to; i++) {
    const x = wav.samples[i] ?? 0;
    energy += x * x;
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  const n = to - from;
  // A pure sine of amplitude A over n samples gives power (A n / 2)^2 and energy A^2 n / 2.
  return energy === 0 ? 0 : power / ((n / 2) * energy);
}

/** What every play must carry: a 16,000 Hz 16-bit mono PCM WAV of more than a second of speech. */
export function assertSpeechWav(buf: Buffer): Wav {
  const wav = parseWav(buf);
  assert.equal(wav.format, 1, 'PCM');
  assert.equal(wav.channels, 1, 'mono');
  assert.equal(wav.bitsPerSample, 16, '16-bit');
  assert.equal(wav.sampleRate, 16_000, '16,000 Hz');
  assert.ok(wav.seconds > 1, `longer than a second (${wav.seconds.toFixed(2)} s)`);
  assert.ok(rms(wav.samples) > 500, `not silent (RMS ${rms(wav.samples).toFixed(0)})`);
  assert.ok(peak(wav.samples) > 4_000, `has loud parts (peak ${peak(wav.samples)})`);
  assert.ok(voicedShare(wav) > 0.4, `mostly voiced (${(voicedShare(wav) * 100).toFixed(0)}% of windows)`);
  return wav;
}
