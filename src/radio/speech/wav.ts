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

/**
 * The samples of a WAV this module wrote (44-byte header, 16-bit mono). Not a general WAV reader:
 * it refuses anything else, so a handler never mixes audio of another format into ours.
 */
export function samplesOfWav(wav: Buffer): Int16Array {
  const ours =
    wav.length >= HEADER_BYTES &&
    wav.toString('ascii', 0, 4) === 'RIFF' &&
    wav.toString('ascii', 8, 12) === 'WAVE' &&
    wav.readUInt16LE(20) === 1 &&
    wav.readUInt16LE(22) === 1 &&
    wav.readUInt16LE(34) === 16 &&
    wav.toString('ascii', 36, 40) === 'data';
  if (!ours) throw new Error('not a 16-bit mono PCM WAV written by this service');
  const count = Math.min(wav.readUInt32LE(40), wav.length - HEADER_BYTES) >> 1;
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) samples[i] = wav.readInt16LE(HEADER_BYTES + i * 2);
  return samples;
}

export function sampleRateOfWav(wav: Buffer): number {
  return wav.readUInt32LE(24);
}

/** Duration in milliseconds of a WAV this module wrote. */
export function durationMsOfWav(wav: Buffer): number {
  return Math.round(((wav.length - HEADER_BYTES) / 2 / sampleRateOfWav(wav)) * 1000);
}
