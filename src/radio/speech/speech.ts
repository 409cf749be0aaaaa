// Speech synthesis behind one small interface: text in, 16-bit mono samples at the radio's rate
// (16 kHz) or a WAV out. Behind it, the engine chain (engines.ts): the best engine this machine has
// for the language speaks; an engine that cannot run (not startable, crashed for good) hands over
// to the next. Every engine is bounded the same way (queue, time, audio length) and gets plain text.
import fs from 'node:fs';
import { ENGINE_NAMES, type EngineName, type SpeechEngine } from './engine.ts';
import { availableEngines, createEngine, privateTmpDir } from './engines.ts';
import { FairScheduler } from './fair.ts';
import { readingOf } from './reading.ts';
import { shapeForRadio } from './shape.ts';
import { encodeWav, SAMPLE_RATE } from './wav.ts';
import { SpeechInputError, SpeechUnavailableError } from './errors.ts';

export { SpeechBusyError, SpeechInputError, SpeechTimeoutError, SpeechUnavailableError } from './errors.ts';
export { ENGINE_NAMES, type EngineName } from './engine.ts';

/** Speech as 16-bit PCM mono samples. */
export interface SpeechSamples {
  samples: Int16Array;
  sampleRate: number;
  /** The engine that spoke. */
  engine?: EngineName;
}

export interface SpeechSynthesizer {
  /** The text spoken, as samples to mix before encoding. `language`: "en" (default), "fr", or an
   * eSpeak NG voice name; `tenant`: whose turn it waits for (fair.ts; default one shared turn). */
  synthesizeSamples(text: string, language?: string, tenant?: string): Promise<SpeechSamples>;
  /** A WAV of the text spoken. */
  synthesize(text: string, language?: string): Promise<Buffer>;
  /** Requests of the tenant waiting for their turn (fair.ts). */
  waiting(tenant?: string): number;
  /** Resolves once the best engine is started and warm; rejects if none can start. */
  ready(): Promise<void>;
  close(): Promise<void>;
  /** The engines in use, best first (after ready(): without those that could not start). */
  readonly engines: readonly EngineName[];
}

export interface SpeechOptions {
  /** Syntheses at once per engine (worker threads or processes). Default 1: an engine speaks a
   * store announcement in tens of milliseconds, and announcements come a few a minute. */
  workers?: number;
  /** Requests one tenant may have waiting (and each engine may have) beyond which its new ones are refused. Default 32. */
  queueLimit?: number;
  /** Time limit per synthesis in milliseconds, waiting included. Default 10 s. */
  timeoutMs?: number;
  /** Longest audio produced, in seconds. Default MAX_AUDIO_SECONDS. */
  maxAudioSeconds?: number;
  /** The engines to use, best first; default every one this machine has (availableEngines()). */
  engines?: readonly EngineName[];
  /** Where the Debian engines are (default: found on PATH). */
  paths?: Partial<Record<'festival' | 'flite', string>>;
  /** Told of an engine that could not run and was left for the next one. */
  onEngineFailed?: (engine: EngineName, err: Error) => void;
}

export const DEFAULT_VOICE = 'en';
/** The longest announcement, in seconds: what one play may store and send (16 kHz 16-bit mono is
 * 32,000 bytes a second, so at most about 1.9 MB); longer is 422 text_too_long. 500 characters of
 * words take about 40 s. See docs/radio.md "Audio stored". */
export const MAX_AUDIO_SECONDS = 60;

/** Starts the best engine in the background; await ready() before serving to keep first calls fast. */
export function createSpeechSynthesizer(opts: SpeechOptions = {}): SpeechSynthesizer {
  const bounds = { workers: opts.workers ?? 1, queueLimit: opts.queueLimit ?? 32, timeoutMs: opts.timeoutMs ?? 10_000 };
  const names = (opts.engines ?? availableEngines()).filter((n) => ENGINE_NAMES.includes(n));
  if (names.length === 0) throw new Error('no speech engine to use');
  const tmpDir = privateTmpDir();
  let chain: SpeechEngine[] = names.map((name) => createEngine(name, bounds, tmpDir, opts.paths));
  const maxSamples = Math.round((opts.maxAudioSeconds ?? MAX_AUDIO_SECONDS) * SAMPLE_RATE);
  let closed = false;
  const fair = new FairScheduler({ concurrency: bounds.workers, perTenantLimit: bounds.queueLimit, timeoutMs: bounds.timeoutMs });

  const drop = (engine: SpeechEngine, err: Error) => {
    if (!chain.includes(engine) || chain.length === 1) return false;
    chain = chain.filter((e) => e !== engine);
    opts.onEngineFailed?.(engine.name, err);
    void engine.close();
    return true;
  };

  const synthesizeSamples = (text: string, language: string = DEFAULT_VOICE, tenant = ''): Promise<SpeechSamples> =>
    fair.run(tenant, () => speakNow(text, language));

  const speakNow = async (text: string, language: string): Promise<SpeechSamples> => {
    if (closed) throw new SpeechUnavailableError('the speech synthesizer is closed');
    if (text.trim() === '') throw new SpeechInputError('empty', 'there is nothing to say');
    let lastError: Error | null = null;
    // Every engine reads English the same way (reading.ts); eSpeak NG reads French numbers itself.
    const reading = language === 'en' || language === 'en-us' ? readingOf(text) : text;
    for (const engine of chain.filter((e) => e.speaks(language))) {
      try {
        return { samples: shapeForRadio(await engine.speak(reading, language, maxSamples)), sampleRate: SAMPLE_RATE, engine: engine.name };
      } catch (err) {
        // An engine that cannot run hands over; a refusal (busy, too slow, bad input) is the answer.
        if (!(err instanceof SpeechUnavailableError) || closed) throw err;
        lastError = err;
      }
    }
    if (lastError !== null) throw lastError;
    throw new SpeechInputError('unknown_voice', `no speech engine speaks "${language}"`);
  };

  let readyOnce: Promise<void> | null = null;
  const ready = () =>
    (readyOnce ??= (async () => {
      for (;;) {
        const best = chain[0];
        if (best === undefined) throw new SpeechUnavailableError('no speech engine can start');
        try {
          await best.ready();
          return;
        } catch (err) {
          if (closed || !drop(best, err as Error)) throw new SpeechUnavailableError(`the speech engine cannot start: ${(err as Error).message}`);
        }
      }
    })());

  return {
    synthesizeSamples,
    async synthesize(text: string, language?: string): Promise<Buffer> {
      const { samples, sampleRate } = await synthesizeSamples(text, language);
      return encodeWav(samples, sampleRate);
    },
    waiting: (tenant = '') => fair.waiting(tenant),
    ready,
    async close() {
      if (closed) return;
      closed = true;
      fair.close();
      await Promise.all(chain.map((e) => e.close()));
      fs.rmSync(tmpDir, { recursive: true, force: true });
    },
    get engines() {
      return chain.map((e) => e.name);
    },
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
    synthesizeSamples: async (text, language, tenant) => {
      const speech = get();
      await speech.ready();
      return speech.synthesizeSamples(text, language, tenant);
    },
    synthesize: async (text, language) => {
      const speech = get();
      await speech.ready();
      return speech.synthesize(text, language);
    },
    waiting: (tenant) => inner?.waiting(tenant) ?? 0,
    ready: () => get().ready(),
    close: async () => {
      await inner?.close();
    },
    get engines() {
      return get().engines;
    },
  };
}
