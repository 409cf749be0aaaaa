// WAV (RIFF) encoding of 16-bit PCM mono: the one audio format the radio sends to edge devices.
import os from 'node:os';

export const SAMPLE_RATE = 22_050;
const HEADER_BYTES = 44;

/** A canonical 44-byte-header WAV file around the samples: PCM, 1 channel, 16-bit, little-endian. */
export function encodeWav(samples: Int16Array, sampleRate: number = SAMPLE_RATE): Buffer {
  const dataBytes = samples.length * 2;
  const wav = Buffer.allocUnsafe(HEADER_BYTES + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // size of the fmt chunk
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  if (os.endianness() === 'LE') {
    Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(wav, HEADER_BYTES);
  } else {
    for (let i = 0; i < samples.length; i++) wav.writeInt16LE(samples[i] ?? 0, HEADER_BYTES + i * 2);
  }
  return wav;
}

/** Duration in milliseconds of samples at a sample rate. */
export function durationMs(samples: Int16Array, sampleRate: number): number {
  return Math.round((samples.length / sampleRate) * 1000);
}
