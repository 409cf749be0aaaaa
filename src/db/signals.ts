// Commit signals: how the rest of the service learns that a transaction committed a change it
// acts on (a device message queued, an event written). The writer marks its transaction with
// `q.signal(...)`; the transaction, once committed, wakes the listeners of this process and, on
// PostgreSQL, of every other instance (NOTIFY). Listeners also poll: a wake-up is a hint that
// makes them act now, never the only way they learn of work.
import crypto from 'node:crypto';

/** What a committed change can wake: the device dispatcher, the event log's subscribers, the
 * webhook delivery worker, the memory of live tokens (a token revoked or changed), and the
 * embedded broker's check of its connected devices' keys (a key rotated, a device disabled). */
export type Signal = 'device_outbox' | 'events' | 'webhooks' | 'credentials' | 'device_keys';

export const SIGNALS: readonly Signal[] = ['device_outbox', 'events', 'webhooks', 'credentials', 'device_keys'];

/** The channel every instance LISTENs on. A channel is database-wide, so the payload names the
 * schema, the instance and the signals: deployments or test runs in other schemas ignore ours. */
export const NOTIFY_CHANNEL = 'storeops_commits';

export interface CommitSignals {
  /** Calls fn after every commit that signalled `signal` (here, or on another instance). */
  on(signal: Signal, fn: () => void): () => void;
  /** Resolves once other instances' commits reach this one (at once when there are none). */
  listening(): Promise<void>;
}

/**
 * The in-process side: listeners per signal, woken once per turn of the event loop however many
 * commits signalled in it. `connect` adds the other instances (PostgreSQL).
 */
export class SignalHub implements CommitSignals {
  readonly instanceId = crypto.randomBytes(6).toString('hex');
  readonly #scope: string;
  readonly #listeners = new Map<Signal, Set<() => void>>();
  readonly #pending = new Set<Signal>();
  #scheduled = false;
  #broadcast: ((signals: ReadonlySet<Signal>) => void) | null = null;
  #startListening: (() => Promise<void>) | null = null;
  #listening: Promise<void> | null = null;

  /** scope: the schema whose commits these are. */
  constructor(scope = 'public') {
    this.#scope = scope;
  }

  /** send tells the other instances; listen opens the listening connection (at the first listener)
   * and resolves once it listens. */
  connect(opts: { send: (signals: ReadonlySet<Signal>) => void; listen: () => Promise<void> }): void {
    this.#broadcast = opts.send;
    this.#startListening = opts.listen;
  }

  on(signal: Signal, fn: () => void): () => void {
    let set = this.#listeners.get(signal);
    if (set === undefined) this.#listeners.set(signal, (set = new Set()));
    set.add(fn);
    void this.listening();
    return () => void set.delete(fn);
  }

  listening(): Promise<void> {
    if (this.#startListening === null) return Promise.resolve();
    return (this.#listening ??= this.#startListening());
  }

  /** A transaction of this process committed with these signals. */
  committed(signals: ReadonlySet<Signal>): void {
    if (signals.size === 0) return;
    this.#wake(signals);
    this.#broadcast?.(signals);
  }

  /** The NOTIFY payload telling the other instances of this instance's commits with these signals. */
  payload(signals: Iterable<Signal>): string {
    return `${this.#scope}:${this.instanceId}:${[...signals].join(',')}`;
  }

  /** A NOTIFY payload from any instance; this instance's own are already delivered. */
  received(payload: string): void {
    const [scope, from, list = ''] = payload.split(':');
    if (scope !== this.#scope || from === this.instanceId) return;
    this.#wake(new Set(list.split(',').filter((s): s is Signal => (SIGNALS as readonly string[]).includes(s))));
  }

  /** Wakes every listener: after the listening connection was away, other instances' commits may
   * have gone unheard. */
  wakeAll(): void {
    this.#wake(new Set(SIGNALS));
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
        for (const fn of this.#listeners.get(signal) ?? []) {
          try {
            fn();
          } catch {
            // A listener that throws never stops the others.
          }
        }
      }
    });
  }
}
