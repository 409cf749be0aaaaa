// The look-ups of what devices have not acked, for the lanes' redelivery passes: the lanes that ask
// together (a mass reconnect) are answered by one statement per 500 topics, not one each.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { unackedOfTopics } from './store.ts';

/** Messages a pass considers (the rest: the next subscription). */
export const REDELIVERY_MAX = 1_000;

/** An unacked message of a topic, in order: its id and its size on the wire. */
export type Unacked = { id: number; bytes: number };
type Lookup = { resolve: (ids: Unacked[]) => void; reject: (err: unknown) => void };

export class UnackedLookups {
  readonly #db: Db;
  readonly #clock: Clock;
  /** Topics waiting for the next batched look-up. */
  #lookups = new Map<string, Lookup[]>();
  #scheduled = false;

  constructor(opts: { db: Db; clock: Clock }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
  }

  /** The topic's unacked messages, looked up with those of the other topics asked for meanwhile. */
  of(topic: string): Promise<Unacked[]> {
    return new Promise((resolve, reject) => {
      const waiting = this.#lookups.get(topic) ?? [];
      waiting.push({ resolve, reject });
      this.#lookups.set(topic, waiting);
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        const batch = this.#lookups;
        this.#lookups = new Map();
        this.#lookUp(batch).catch((err: unknown) => {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
        });
      });
    });
  }

  async #lookUp(batch: Map<string, Lookup[]>): Promise<void> {
    const topics = [...batch.keys()];
    for (let i = 0; i < topics.length; i += 500) {
      const slice = topics.slice(i, i + 500);
      const found = await this.#db.statement((q) => unackedOfTopics(q, slice, REDELIVERY_MAX, this.#clock.now()));
      for (const topic of slice) {
        for (const w of batch.get(topic) ?? []) w.resolve(found.get(topic) ?? []);
        batch.delete(topic);
      }
    }
  }
}
