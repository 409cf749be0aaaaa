// Fair speech scheduling: the engines are shared by every tenant, so their queue is not where
// callers wait. Each tenant (an organization) waits in a queue of its own, bounded on its own, and
// the engines take the tenants' next syntheses in turn. One tenant's burst fills only its own
// queue (its extra requests are refused, 503 speech_busy) and delays another tenant's
// announcement by at most one synthesis per busy tenant, never refuses it.
import { SpeechBusyError, SpeechTimeoutError, SpeechUnavailableError } from './errors.ts';

export interface FairOptions {
  /** Syntheses handed to the engines at once (their workers: they never queue behind each other). */
  concurrency: number;
  /** Requests one tenant may have waiting; more of its requests are refused at once. */
  perTenantLimit: number;
  /** Milliseconds a request may wait for its turn. */
  timeoutMs: number;
}

interface Waiting {
  start: () => void;
  fail: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class FairScheduler {
  readonly #opts: FairOptions;
  /** Per tenant, its waiting requests; the map's order is the turn order (a served tenant goes last). */
  readonly #queues = new Map<string, Waiting[]>();
  #running = 0;
  #closed = false;

  constructor(opts: FairOptions) {
    this.#opts = opts;
  }

  /** Runs work in the tenant's turn; its promise settles as work's does. */
  run<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new SpeechUnavailableError('the speech synthesizer is closed'));
    const queue = this.#queues.get(tenant) ?? [];
    if (this.#running >= this.#opts.concurrency && queue.length >= this.#opts.perTenantLimit) {
      return Promise.reject(new SpeechBusyError('this organization already has as many syntheses waiting as it may'));
    }
    return new Promise<T>((resolve, reject) => {
      const go = () => {
        this.#running++;
        work()
          .then(resolve, reject)
          .finally(() => {
            this.#running--;
            this.#startNext();
          });
      };
      if (this.#running < this.#opts.concurrency && this.#queues.size === 0) {
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
          const mine = this.#queues.get(tenant);
          const at = mine?.indexOf(waiting) ?? -1;
          if (mine !== undefined && at >= 0) {
            mine.splice(at, 1);
            if (mine.length === 0) this.#queues.delete(tenant);
          }
          reject(new SpeechTimeoutError('no speech engine became free in time'));
        }, this.#opts.timeoutMs),
      };
      queue.push(waiting);
      this.#queues.set(tenant, queue);
      this.#startNext();
    });
  }

  /** The next tenant in turn starts its oldest request; that tenant then goes to the end of the turn. */
  #startNext(): void {
    while (this.#running < this.#opts.concurrency) {
      const first = this.#queues.entries().next();
      if (first.done === true) return;
      const [tenant, queue] = first.value;
      this.#queues.delete(tenant);
      const waiting = queue.shift();
      if (queue.length > 0) this.#queues.set(tenant, queue);
      waiting?.start();
    }
  }

  /** Requests of the tenant waiting for their turn. */
  waiting(tenant: string): number {
    return this.#queues.get(tenant)?.length ?? 0;
  }

  close(): void {
    this.#closed = true;
    for (const queue of this.#queues.values()) {
      for (const waiting of queue) {
        clearTimeout(waiting.timer);
        waiting.fail(new SpeechUnavailableError('the speech synthesizer is closing'));
      }
    }
    this.#queues.clear();
  }
}
