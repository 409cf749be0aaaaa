// Commit signals: how the rest of the service learns that a transaction committed a change it
// acts on (a device message queued, an event written). The writer marks its transaction with
// `q.signal(...)`; the transaction, once committed, wakes the listeners of this process and, on
// PostgreSQL, of every other instance (NOTIFY). Listeners also poll: a wake-up is a hint that
// makes them act now, never the only way they learn of work.
import crypto from 'node:crypto';

/** What a committed change can wake: the device dispatcher, the event log's subscribers. */
export type Signal = 'device_outbox' | 'events';

export const SIGNALS: readonly Signal[] = ['device_outbox', 'events'];

/** The channel every instance LISTENs on; the payload names the instance and the signals. */
export const NOTIFY_CHANNEL = 'storeops_commits';

export interface CommitSignals {
  /** Calls fn after every commit that signalled `signal` (here, or on another instance). */
  on(signal: Signal, fn: () => void): () => void;
}

/**
 * The in-process side: listeners per signal, woken once per turn of the event loop however many
 * commits signalled in it. `broadcast` tells the other instances (null: there are none).
 */
export class SignalHub implements CommitSignals {
  readonly instanceId = crypto.randomBytes(6).toString('hex');
  readonly #listeners = new Map<Signal, Set<() => void>>();
  readonly #pending = new Set<Signal>();
  #scheduled = false;
  #broadcast: ((payload: string) => void) | null = null;
  #firstListener: (() => void) | null = null;

  /** Cross-instance delivery (PostgreSQL): send tells the others; started runs at the first listener. */
  connect(opts: { send: (payload: string) => void; onFirstListener: () => void }): void {
    this.#broadcast = opts.send;
    this.#firstListener = opts.onFirstListener;
  }

  on(signal: Signal, fn: () => void): () => void {
    let set = this.#listeners.get(signal);
    if (set === undefined) this.#listeners.set(signal, (set = new Set()));
    set.add(fn);
    const start = this.#firstListener;
    this.#firstListener = null;
    start?.();
    return () => void set.delete(fn);
  }

  /** A transaction of this process committed with these signals. */
  committed(signals: ReadonlySet<Signal>): void {
    if (signals.size === 0) return;
    this.#wake(signals);
    this.#broadcast?.(`${this.instanceId}:${[...signals].join(',')}`);
  }

  /** A NOTIFY payload from any instance; this instance's own are already delivered. */
  received(payload: string): void {
    const [from, list = ''] = payload.split(':');
    if (from === this.instanceId) return;
    this.#wake(new Set(list.split(',').filter((s): s is Signal => (SIGNALS as readonly string[]).includes(s))));
  }

  #wake(signals: ReadonlySet<Signal>): void {
    for (const s of signals) this.#pending.add(s);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const due = [...this.#pending];
      this.#pending.clear();
      for (const signal of due) {
        for (const fn of this.#listeners.get(signal) ?? []) fn();
      }
    });
  }
}
