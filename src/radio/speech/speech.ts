// Speech synthesis behind one small interface: text in, 16-bit mono samples (22,050 Hz) or a WAV out.
// The default engine is eSpeak NG compiled to WebAssembly (@echogarden/espeak-ng-emscripten), so
// the service speaks offline with nothing but npm packages; it runs in a pool of worker threads
// so a synthesis never blocks the event loop.
import { WorkerPool } from './pool.ts';
import { ssmlOf } from './ssml.ts';
import { encodeWav, SAMPLE_RATE } from './wav.ts';
import { SpeechInputError } from './errors.ts';

export { SpeechBusyError, SpeechInputError, SpeechTimeoutError, SpeechUnavailableError } from './errors.ts';

/** Speech as 16-bit PCM mono samples. */
export interface SpeechSamples {
  samples: Int16Array;
  sampleRate: number;
}

export interface SpeechSynthesizer {
  /** The text spoken, as samples to mix before encoding. `voice` is an eSpeak NG voice name (default "en-us"). */
  synthesizeSamples(text: string, voice?: string): Promise<SpeechSamples>;
  /** A WAV of the text spoken. */
  synthesize(text: string, voice?: string): Promise<Buffer>;
  /** Resolves once the engines are started and warm; rejects if they cannot start. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SpeechOptions {
  /** Worker threads, one engine each (~95 MB of memory apiece). Default 1: an engine speaks a
   * store announcement in tens of milliseconds, and announcements come a few a minute. */
  workers?: number;
  /** Requests waiting for a worker beyond which new ones are refused. Default 32. */
  queueLimit?: number;
  /** Time limit per synthesis in milliseconds, waiting included. Default 10 s. */
  timeoutMs?: number;
  /** Longest audio produced, in seconds. Default 120. */
  maxAudioSeconds?: number;
}

export const DEFAULT_VOICE = 'en-us';

/** Starts the engines in the background; await ready() before serving to keep first calls fast. */
export function createSpeechSynthesizer(opts: SpeechOptions = {}): SpeechSynthesizer {
  const pool = new WorkerPool({
    size: opts.workers ?? 1,
    queueLimit: opts.queueLimit ?? 32,
    timeoutMs: opts.timeoutMs ?? 10_000,
    workerUrl: new URL('./espeak-worker.ts', import.meta.url),
  });
  const maxSamples = Math.round((opts.maxAudioSeconds ?? 120) * SAMPLE_RATE);
  const synthesizeSamples = async (text: string, voice: string = DEFAULT_VOICE): Promise<SpeechSamples> => {
    if (text.trim() === '') throw new SpeechInputError('empty', 'there is nothing to say');
    return { samples: await pool.run(ssmlOf(text), voice, maxSamples), sampleRate: SAMPLE_RATE };
  };
  return {
    synthesizeSamples,
    async synthesize(text: string, voice?: string): Promise<Buffer> {
      const { samples, sampleRate } = await synthesizeSamples(text, voice);
      return encodeWav(samples, sampleRate);
    },
    ready: () => pool.ready(),
    close: () => pool.close(),
  };
}

/**
 * A synthesizer that starts its engines on first use: for processes (tests, tools) that may never
 * speak and should not pay for warming engines.
 */
export function lazySpeechSynthesizer(create: () => SpeechSynthesizer): SpeechSynthesizer {
  let inner: SpeechSynthesizer | null = null;
  const get = () => (inner ??= create());
  return {
    // The engines' start is not counted against the first synthesis's time limit.
    synthesizeSamples: async (text, voice) => {
      const speech = get();
      await speech.ready();
      return speech.synthesizeSamples(text, voice);
    },
    synthesize: async (text, voice) => {
      const speech = get();
      await speech.ready();
      return speech.synthesize(text, voice);
    },
    ready: () => get().ready(),
    close: async () => {
      await inner?.close();
    },
  };
}
