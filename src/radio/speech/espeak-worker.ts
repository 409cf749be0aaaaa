// One eSpeak NG engine (WebAssembly) in a worker thread. Calls on one engine are serial and
// synchronous, so each runs here, off the event loop; the pool hands this worker one request at a
// time.
import { parentPort } from 'node:worker_threads';
import initialize, { type ESpeakNGWorker } from '@echogarden/espeak-ng-emscripten';
import type { SynthesisRequest, WorkerReply } from './protocol.ts';
import { toRadioRate } from './resample.ts';

/** eSpeak NG speaks at 22,050 Hz; the radio's rate is brought here, off the main thread. */
const ESPEAK_RATE = 22_050;

// A fresh engine is several times slower for its first ten or so syntheses (the WebAssembly is
// compiled again, optimized, once it runs hot), so each worker says a few sentences first.
const WARM_UP = [
  '<speak>Attention shoppers.</speak>',
  '<speak>Cleanup needed in aisle 5, thank you.</speak>',
  '<speak>A customer needs help at the pharmacy counter. 3 dollars and 50 cents, 10 percent off.</speak>',
];

const port = parentPort;
if (port === null) throw new Error('espeak-worker.ts runs only as a worker thread');

function reply(message: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function concat(chunks: Int16Array[], total: number): Int16Array<ArrayBuffer> {
  const out = new Int16Array(new ArrayBuffer(total * 2));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

// Loading a voice costs a millisecond or two: done only when it changes.
let currentVoice = '';

function run(engine: ESpeakNGWorker, request: SynthesisRequest): void {
  if (request.voice !== currentVoice) {
    if (engine.set_voice(request.voice) !== 0) {
      // eSpeak keeps its previous voice; reload ours on the next call to be sure.
      currentVoice = '';
      reply({ kind: 'failed', id: request.id, reason: 'unknown_voice', message: `unknown voice "${request.voice}"` });
      return;
    }
    currentVoice = request.voice;
  }
  const deadline = performance.now() + request.budgetMs;
  const chunks: Int16Array[] = [];
  let total = 0;
  let stop: 'timeout' | 'too_long' | null = null;
  engine.synthesize(request.input, (samples) => {
    if (samples !== null && samples.length > 0) {
      chunks.push(samples);
      total += samples.length;
    }
    // Returning true makes eSpeak abandon the rest of the text.
    if (total > (request.maxSamples * ESPEAK_RATE) / 16_000) stop = 'too_long';
    else if (performance.now() > deadline) stop = 'timeout';
    return stop !== null;
  });
  if (stop === 'too_long') {
    reply({ kind: 'failed', id: request.id, reason: 'too_long', message: 'the text makes longer audio than allowed' });
  } else if (stop === 'timeout') {
    reply({ kind: 'failed', id: request.id, reason: 'timeout', message: 'the synthesis took longer than allowed' });
  } else {
    const samples = toRadioRate(concat(chunks, total), ESPEAK_RATE) as Int16Array<ArrayBuffer>;
    reply({ kind: 'done', id: request.id, samples }, [samples.buffer]);
  }
}

let engine: ESpeakNGWorker;
try {
  const espeak = await initialize();
  engine = new espeak.eSpeakNGWorker();
  if (engine.set_voice('en-us') !== 0) throw new Error('the en-us voice is missing');
  currentVoice = 'en-us';
  for (let round = 0; round < 4; round++) for (const ssml of WARM_UP) engine.synthesize(ssml, () => false);
} catch (err) {
  reply({ kind: 'init_failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}

port.on('message', (request: SynthesisRequest) => {
  try {
    run(engine, request);
  } catch (err) {
    reply({ kind: 'failed', id: request.id, reason: 'engine_error', message: err instanceof Error ? err.message : String(err) });
  }
});
reply({ kind: 'ready' });
