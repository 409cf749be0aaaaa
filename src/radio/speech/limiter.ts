// The same bounds for an engine that runs outside the process (a command per synthesis, or one
// long-running engine fed one text at a time) as the worker pool gives its workers: at most
// `concurrency` at once, at most `queueLimit` waiting (more are refused at once), and a time limit
// from submission to result, waiting included.
import { SpeechBusyError, SpeechTimeoutError, SpeechUnavailableError } from './errors.ts';

export interface LimiterOptions {
  concurrency: number;
  queueLimit: number;
  timeoutMs: number;
}

interface Waiting {
  start: () => void;
  fail: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class Limiter {
  readonly #opts: LimiterOptions;
  readonly #queue: Waiting[] = [];
  #running = 0;
  #closed = false;

  constructor(opts: LimiterOptions) {
    this.#opts = opts;
  }

  /** Runs `work` with the time it has left (ms) once a place is free; its signal aborts at the deadline. */
  run<T>(work: (budgetMs: number, signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new SpeechUnavailableError('the speech engine is closed'));
    if (this.#running >= this.#opts.concurrency && this.#queue.length >= this.#opts.queueLimit) {
      return Promise.reject(new SpeechBusyError('the speech engine is busy and its queue is full'));
    }
    const deadline = performance.now() + this.#opts.timeoutMs;
    return new Promise<T>((resolve, reject) => {
      const go = () => {
        this.#running++;
        const budgetMs = Math.max(1, Math.floor(deadline - performance.now()));
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new SpeechTimeoutError('the speech synthesis did not finish in time')), budgetMs);
        work(budgetMs, controller.signal)
          .then(resolve, (err: unknown) => reject(controller.signal.aborted ? (controller.signal.reason as Error) : err))
          .finally(() => {
            clearTimeout(timer);
            this.#running--;
            this.#queue.shift()?.start();
          });
      };
      if (this.#running < this.#opts.concurrency) {
        go();
        return;
      }
      const waiting: Waiting = {
        start: () => {
          clearTimeout(waiting.timer);
          go();
        },
        fail: reject,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiting);
          if (at >= 0) this.#queue.splice(at, 1);
          reject(new SpeechTimeoutError('the speech engine did not become free in time'));
        }, this.#opts.timeoutMs),
      };
      this.#queue.push(waiting);
    });
  }

  close(): void {
    this.#closed = true;
    for (const waiting of this.#queue.splice(0)) {
      clearTimeout(waiting.timer);
      waiting.fail(new SpeechUnavailableError('the speech engine is closing'));
    }
  }
}
