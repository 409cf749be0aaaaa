// The loop of a background worker (the event subscribers, the webhook deliverer, the scheduler, the
// live feed, device health, retention, the device dispatcher): its work runs when a commit wakes
// it, and every pollMs anyway; one run at a time, and a wake-up that comes during a run makes
// another run right after it. A failing run is logged at most once a minute (a database that is
// away fails every poll) and the loop goes on.
import type { CommitSignals, Signal } from '../db/signals.ts';

export interface WorkLoopOptions {
  pollMs: number;
  onError: (err: unknown) => void;
  /** The commit signal that wakes the loop while it is started (from this instance and, through
   * NOTIFY, every other): listened to from start() to stop(). */
  wakeOn?: { commits: CommitSignals; signal: Signal };
}

export class WorkLoop<T> {
  readonly #work: () => Promise<T>;
  readonly #pollMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  /** The run in progress: the loop's work, or a worker's other work run in its turn (exclusive). */
  #running: Promise<unknown> | null = null;
  #again = false;
  #soonMs: number | null = null;
  #started = false;
  #lastError = 0;
  readonly #wakeOn: WorkLoopOptions['wakeOn'];
  #off: (() => void) | null = null;

  constructor(work: () => Promise<T>, opts: WorkLoopOptions) {
    this.#work = work;
    this.#pollMs = opts.pollMs;
    this.#onError = opts.onError;
    this.#wakeOn = opts.wakeOn;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    if (this.#wakeOn !== undefined) this.#off = this.#wakeOn.commits.on(this.#wakeOn.signal, () => this.wake());
    this.#schedule(0);
  }

  /** Stops polling (and listening) and waits for a run in progress. */
  async stop(): Promise<void> {
    this.#off?.();
    this.#off = null;
    this.#started = false;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running?.catch(() => undefined);
  }

  /** Run now, or right after the run in progress. */
  wake(): void {
    if (!this.#started) return;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    this.#schedule(0);
  }

  /** Run again within delayMs (sooner than the poll): work that is known to become ready soon. */
  soon(delayMs: number): void {
    if (!this.#started) return;
    this.#soonMs = this.#soonMs === null ? delayMs : Math.min(this.#soonMs, delayMs);
  }

  /** Runs the work now (after a run in progress), whether or not the loop is started. */
  runNow(): Promise<T> {
    return this.exclusive(this.#work);
  }

  /** Runs other work of the worker in the loop's turn: after the run in progress, never beside one
   * (a worker whose operations must not overlap its loop's, like the device dispatcher's). */
  async exclusive<U>(work: () => Promise<U>): Promise<U> {
    while (this.#running !== null) await this.#running.catch(() => undefined);
    const run = work();
    this.#running = run;
    try {
      return await run;
    } finally {
      this.#running = null;
    }
  }

  #schedule(delayMs: number): void {
    if (!this.#started) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.runNow()
        .catch((err: unknown) => this.#failed(err))
        .finally(() => {
          const again = this.#again;
          const soon = this.#soonMs;
          this.#again = false;
          this.#soonMs = null;
          this.#schedule(again ? 0 : Math.min(soon ?? this.#pollMs, this.#pollMs));
        });
    }, delayMs);
    this.#timer.unref();
  }

  #failed(err: unknown): void {
    if (Date.now() - this.#lastError < 60_000) return;
    this.#lastError = Date.now();
    this.#onError(err);
  }
}
