// The service's real speech engines, with a synthesis held back on request: a slow engine made at
// will, to see what the service does meanwhile. Everything else goes straight to the engines, and
// a held synthesis, once let go, is synthesized by them too.
import type { SpeechSamples, SpeechSynthesizer } from '../../src/radio/speech/speech.ts';
import { encodeWav } from '../../src/radio/speech/wav.ts';
import { testSpeech } from '../support/world.ts';

export interface Hold {
  /** Resolves when the held synthesis is asked for (and waits). */
  reached: Promise<void>;
  /** Lets it go on to the engine. */
  release(): void;
}

export class HeldSpeech implements SpeechSynthesizer {
  readonly #inner: SpeechSynthesizer;
  #holds: { matches: (text: string) => boolean; skip: number; reached: () => void; gate: Promise<void> }[] = [];

  constructor(inner: SpeechSynthesizer = testSpeech()) {
    this.#inner = inner;
  }

  /** Holds the next synthesis whose text matches, after letting `skip` matching ones through. */
  hold(matches: (text: string) => boolean, skip = 0): Hold {
    let reached!: () => void;
    let release!: () => void;
    const hold = {
      matches,
      skip,
      reached: () => reached(),
      gate: new Promise<void>((resolve) => (release = resolve)),
    };
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    this.#holds.push(hold);
    return { reached: reachedPromise, release };
  }

  async synthesizeSamples(text: string, language?: string, tenant?: string): Promise<SpeechSamples> {
    const hold = this.#holds.find((h) => h.matches(text));
    if (hold !== undefined) {
      if (hold.skip > 0) {
        hold.skip--;
      } else {
        this.#holds = this.#holds.filter((h) => h !== hold);
        hold.reached();
        await hold.gate;
      }
    }
    return this.#inner.synthesizeSamples(text, language, tenant);
  }

  async synthesize(text: string, language?: string): Promise<Buffer> {
    const { samples, sampleRate } = await this.synthesizeSamples(text, language);
    return encodeWav(samples, sampleRate);
  }

  waiting(tenant?: string): number {
    return this.#inner.waiting(tenant);
  }

  ready(): Promise<void> {
    return this.#inner.ready();
  }

  close(): Promise<void> {
    return Promise.resolve(); // the shared engines are closed when the test file ends
  }

  get engines() {
    return this.#inner.engines;
  }
}
