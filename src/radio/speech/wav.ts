// WAV (RIFF) encoding of 16-bit PCM mono: the one audio format the radio sends to edge devices.
import os from 'node:os';

/** The radio's rate: plenty for speech on a two-way radio, and what the slt voices speak natively. */
export const SAMPLE_RATE = 16_000;
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

/** The samples of a 16-bit PCM mono WAV (as the engines on the command line write it); null if it is not one. */
export function decodeWav(buf: Buffer): { samples: Int16Array; sampleRate: number } | null {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null;
  let at = 12;
  let sampleRate = 0;
  let ok = false;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      ok = buf.readUInt16LE(at + 8) === 1 && buf.readUInt16LE(at + 10) === 1 && buf.readUInt16LE(at + 22) === 16;
      sampleRate = buf.readUInt32LE(at + 12);
    } else if (id === 'data') {
      if (!ok) return null;
      // The engines write the data chunk last; a size past the end (a stream's placeholder) means "to the end".
      const end = Math.min(buf.length, at + 8 + size);
      const samples = new Int16Array(Math.floor((end - at - 8) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = buf.readInt16LE(at + 8 + i * 2);
      return { samples, sampleRate };
    }
    at += 8 + size + (size % 2);
  }
  return null;
}
