// Debian's Flite (`apt-get install flite`) with the voice FLITE_VOICE (engine.ts): a process per synthesis, the
// text passed as one argument (spawn without a shell, so no character of it is a command) and the
// WAV written to a private temporary folder. About 60 ms for a store announcement, 16 kHz.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SpeechInputError, SpeechUnavailableError } from './errors.ts';
import { FLITE_LEXICON, FLITE_LEXICON_FILE, FLITE_VOICE, fliteArgs, plainText, type EngineBounds, type SpeechEngine } from './engine.ts';
import { Limiter } from './limiter.ts';
import { toRadioRate } from './resample.ts';
import { decodeWav } from './wav.ts';

export function run(binary: string, args: string[], signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], signal, shell: false });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2_000) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => reject(signal.aborted ? signal.reason : new SpeechUnavailableError(`${path.basename(binary)}: ${err.message}`)));
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new SpeechUnavailableError(`${path.basename(binary)} exited with ${code}: ${stderr.trim().slice(0, 200)}`));
    });
  });
}

export async function readSpeech(file: string, maxSamples: number): Promise<Int16Array> {
  const wav = decodeWav(await fs.readFile(file));
  if (wav === null) throw new SpeechUnavailableError('the engine wrote no WAV');
  const samples = toRadioRate(wav.samples, wav.sampleRate);
  if (samples.length > maxSamples) throw new SpeechInputError('too_long', 'the text makes longer audio than allowed');
  return samples;
}

export function fliteCliEngine(binary: string, tmpDir: string, bounds: EngineBounds): SpeechEngine {
  const limiter = new Limiter({ concurrency: bounds.workers, queueLimit: bounds.queueLimit, timeoutMs: bounds.timeoutMs });
  // Written once in the engine's private folder (removed with it at close); every run reads it.
  // Flite speaks without it (only the strong "a" is lost), so a failed write is not a failed engine.
  let lexicon: string | null = path.join(tmpDir, FLITE_LEXICON_FILE);
  try {
    writeFileSync(lexicon, FLITE_LEXICON);
  } catch {
    lexicon = null;
  }
  return {
    name: 'flite',
    voice: `cmu ${FLITE_VOICE} (Debian flite)`,
    speaks: (language) => language === 'en' || language === 'en-us',
    speak: (text, _language, maxSamples) =>
      limiter.run(async (_budget, signal) => {
        const file = path.join(tmpDir, `${crypto.randomUUID()}.wav`);
        try {
          await run(binary, [...fliteArgs(lexicon), '-t', plainText(text), '-o', file], signal);
          return await readSpeech(file, maxSamples);
        } finally {
          await fs.rm(file, { force: true });
        }
      }),
    ready: () => Promise.resolve(),
    close: async () => limiter.close(),
  };
}
