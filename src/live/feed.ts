// The live feed: what the open streams of this instance (C6, C8, the console's) hear of committed
// changes. One reader per instance tails the event log in commit order and hands each batch to the
// listeners of the events' locations, so a thousand open streams cost one query per commit, not a
// thousand. It is woken by the `events` commit signal, which comes from this instance and, through
// NOTIFY, from every other one: a stream hears a change whichever instance made it. It also polls
// while anyone listens (a signal is a hint, never the only way to learn of a change).
//
// Unlike the durable subscribers, the feed keeps its place in memory (the snapshot of its last look,
// store.ts): a stream lives as long as its connection, and a client that reconnects reads the state
// again. So it need not wait, as they do, for every older transaction of the cluster to end before
// it hands on a commit: a change reaches the streams as soon as it commits. Nobody listening, it
// reads nothing.
import type { Queryable } from '../db/db.ts';
import type { CommitSignals } from '../db/signals.ts';
import type { EventRow } from '../events/log.ts';
import { WorkLoop } from '../work/loop.ts';
import { committedSince, currentSnapshot } from './store.ts';

export type LiveListener = (events: readonly EventRow[]) => void;

export interface LiveSubscription {
  /** Resolves once the feed's place is set: every change committed after this is heard. */
  readonly ready: Promise<void>;
  close(): void;
}

export interface LiveFeedDeps {
  db: Queryable & { commits: CommitSignals };
  log?: { error(obj: object, msg: string): void };
  pollMs?: number;
}

export class LiveFeed {
  readonly #db: LiveFeedDeps['db'];
  readonly #log: LiveFeedDeps['log'];
  readonly #listeners = new Map<number, Set<LiveListener>>();
  readonly #loop: WorkLoop<void>;
  /** The snapshot of the last look: what it saw was handed on. */
  #position: string | null = null;
  #positioning: Promise<void> | null = null;

  constructor(deps: LiveFeedDeps) {
    this.#db = deps.db;
    this.#log = deps.log;
    this.#loop = new WorkLoop(() => this.#read(), {
      pollMs: deps.pollMs ?? 1_000,
      onError: (err) => deps.log?.error({ err }, 'live feed failed to read the event log; retrying'),
      wakeOn: { commits: this.#db.commits, signal: 'events' },
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** How many listeners are open (a stream that closed leaves none behind). */
  get listenerCount(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }

  /** Hears the committed events of one location, in commit order, from now on. */
  subscribe(locationId: number, listener: LiveListener): LiveSubscription {
    let set = this.#listeners.get(locationId);
    if (set === undefined) this.#listeners.set(locationId, (set = new Set()));
    set.add(listener);
    const ready = this.#position !== null ? Promise.resolve() : this.#place();
    return {
      ready,
      close: () => {
        set.delete(listener);
        if (set.size === 0 && this.#listeners.get(locationId) === set) this.#listeners.delete(locationId);
      },
    };
  }

  /** Reads what committed since the last read now (tests; the loop does it when woken). */
  readNow(): Promise<void> {
    return this.#loop.runNow();
  }

  /** Sets the place at now (once, however many subscribe meanwhile). */
  #place(): Promise<void> {
    this.#positioning ??= currentSnapshot(this.#db).then(
      (snapshot) => {
        this.#position ??= snapshot;
        this.#positioning = null;
      },
      (err: unknown) => {
        this.#positioning = null;
        throw err;
      },
    );
    return this.#positioning;
  }

  async #read(): Promise<void> {
    if (this.#listeners.size === 0) {
      // Nobody listens: forget the place, so nothing is read until someone does.
      this.#position = null;
      return;
    }
    if (this.#position === null) await this.#place();
    const from = this.#position;
    if (from === null) return;
    const { snapshot, events } = await committedSince(this.#db, from);
    this.#position = snapshot;
    if (events.length > 0) this.#deliver(events);
  }

  #deliver(events: readonly EventRow[]): void {
    const byLocation = new Map<number, EventRow[]>();
    for (const event of events) {
      if (event.location_id === null || !this.#listeners.has(event.location_id)) continue;
      let list = byLocation.get(event.location_id);
      if (list === undefined) byLocation.set(event.location_id, (list = []));
      list.push(event);
    }
    for (const [locationId, list] of byLocation) {
      for (const listener of [...(this.#listeners.get(locationId) ?? [])]) {
        try {
          listener(list);
        } catch (err) {
          this.#log?.error({ err }, 'a live listener failed');
        }
      }
    }
  }
}
