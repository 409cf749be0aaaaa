// Messages between the speech pool (main thread) and its workers.

export interface SynthesisRequest {
  id: number;
  /** What the engine reads: SSML with the text escaped (eSpeak NG), or plain text (Flite). */
  input: string;
  voice: string;
  /** Milliseconds the worker may spend before it aborts the synthesis. */
  budgetMs: number;
  /** Longest audio the worker produces before it aborts (bounds memory for any input). */
  maxSamples: number;
}

export type SynthesisFailure = 'timeout' | 'unknown_voice' | 'too_long' | 'engine_error';

export type WorkerReply =
  | { kind: 'ready' }
  | { kind: 'init_failed'; message: string }
  | { kind: 'done'; id: number; samples: Int16Array }
  | { kind: 'failed'; id: number; reason: SynthesisFailure; message: string };
