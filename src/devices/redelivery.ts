// Redelivery through an external broker (the embedded broker's is lanes.ts): when the broker's auth
// plugin tells that a device subscribed, its unacked messages are published again, in order, in
// one transaction holding the topic's lock (so no other instance publishes a newer message for it
// meanwhile). Devices that subscribe together are looked up in one statement, and only those with
// something unacked get a transaction; a few run at once, outside the dispatcher's queue, so a
// mass reconnect does not hold up new commands.
import type { Db } from '../db/db.ts';
import { redeliverTopic, type DispatchContext } from './dispatch.ts';
import { unackedOfTopics } from './store.ts';
import type { GatewayLogger } from './transport.ts';

const CONCURRENT_PASSES = 2;

export class ExternalRedelivery {
  readonly #db: Db;
  readonly #context: () => DispatchContext | null;
  readonly #log: GatewayLogger;
  readonly #track: (work: Promise<unknown>) => void;
  #wanted = new Set<string>();
  #scheduled = false;
  /** Topics with unacked messages, waiting for a pass. */
  readonly #due: string[] = [];
  readonly #queued = new Set<string>();
  #running = 0;

  constructor(opts: { db: Db; context: () => DispatchContext | null; log: GatewayLogger; track: (work: Promise<unknown>) => void }) {
    this.#db = opts.db;
    this.#context = opts.context;
    this.#log = opts.log;
    this.#track = opts.track;
  }

  request(topic: string): void {
    this.#wanted.add(topic);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const topics = [...this.#wanted];
      this.#wanted = new Set();
      this.#track(this.#lookUp(topics).catch((err: unknown) => this.#log.error({ err }, 'redelivery look-up failed')));
    });
  }

  async #lookUp(topics: string[]): Promise<void> {
    const c = this.#context();
    if (c === null) return;
    for (let i = 0; i < topics.length; i += 500) {
      const found = await this.#db.statement((q) => unackedOfTopics(q, topics.slice(i, i + 500), 1, c.now));
      for (const topic of found.keys()) {
        if (this.#queued.has(topic)) continue;
        this.#queued.add(topic);
        this.#due.push(topic);
      }
    }
    this.#pump();
  }

  #pump(): void {
    while (this.#running < CONCURRENT_PASSES && this.#due.length > 0) {
      const topic = this.#due.shift() as string;
      this.#queued.delete(topic);
      const c = this.#context();
      if (c === null) return;
      this.#running++;
      this.#track(
        redeliverTopic(c, topic, false)
          .catch((err: unknown) => this.#log.error({ err, topic }, 'redelivery failed'))
          .finally(() => {
            this.#running--;
            this.#pump();
          }),
      );
    }
  }
}
