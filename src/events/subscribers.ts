// Durable subscribers of the event log: each reads every event once, in commit order, across any
// number of instances. A subscriber's cursor row is locked (FOR UPDATE SKIP LOCKED) while a batch
// is handled, and the handler runs in that same transaction, which also moves the cursor: so what
// a handler writes (a webhook delivery, an announcement) commits exactly once with the cursor.
// Handlers write work for later; they do not call out of the process.
//
// Woken by the commits that wrote events (db signals, from any instance), and by a poll.
import type { Db, Tx } from '../db/db.ts';
import { WorkLoop } from '../work/loop.ts';
import { LOG_END, readCommitted, type EventRow, type LogPosition } from './log.ts';

export type EventHandler = (q: Tx, events: readonly EventRow[]) => Promise<void>;

export interface SubscribersLogger {
  error(obj: object, msg: string): void;
}

type Cursor = LogPosition;

/** How soon to look again at events held back by an older running transaction. */
const HELD_RETRY_MS = 50;

export class EventSubscribers {
  readonly #db: Db;
  readonly #handlers = new Map<string, EventHandler>();
  readonly #log: SubscribersLogger | undefined;
  readonly #batchSize: number;
  readonly #loop: WorkLoop<number>;

  constructor(opts: { db: Db; log?: SubscribersLogger; pollMs?: number; batchSize?: number }) {
    this.#db = opts.db;
    this.#log = opts.log;
    this.#batchSize = opts.batchSize ?? 200;
    this.#loop = new WorkLoop(() => this.#drainAll(), {
      pollMs: opts.pollMs ?? 1_000,
      onError: (err) => this.#log?.error({ err }, 'event subscribers failed; retrying'),
      wakeOn: { commits: this.#db.commits, signal: 'events' },
    });
  }

  /** A subscriber by a stable name (its cursor is stored under it). A new one starts at the log's end. */
  register(name: string, handler: EventHandler): void {
    if (this.#handlers.has(name)) throw new Error(`an event subscriber "${name}" is already registered`);
    this.#handlers.set(name, handler);
  }

  get names(): string[] {
    return [...this.#handlers.keys()];
  }

  /**
   * Places the cursor of every subscriber that has none yet at the log's end, before the service
   * serves: a subscriber first run later would skip the events of the changes made meanwhile (the
   * first requests of a new store, made the moment the service is ready).
   */
  async placeCursors(): Promise<void> {
    for (const name of this.#handlers.keys()) await this.#db.tx((q) => this.#lockCursor(q, name));
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** Hands every subscriber the events committed so far; returns how many deliveries it made. */
  runPending(): Promise<number> {
    return this.#loop.runNow();
  }

  async #drainAll(): Promise<number> {
    let total = 0;
    let failure: unknown = null;
    for (const [name, handler] of this.#handlers) {
      // One subscriber's failure (a poison event, a bug) holds back only that subscriber.
      try {
        for (;;) {
          const handled = await this.#runBatch(name, handler);
          total += handled;
          if (handled < this.#batchSize) break;
        }
      } catch (err) {
        failure ??= err;
        this.#log?.error({ err, subscriber: name }, 'event subscriber failed; its events wait for the next run');
      }
    }
    if (failure !== null) throw failure;
    return total;
  }

  /** One batch of one subscriber; 0 when there is nothing new or another instance holds it. */
  async #runBatch(name: string, handler: EventHandler): Promise<number> {
    return this.#db.tx(async (q) => {
      const cursor = await this.#lockCursor(q, name);
      if (cursor === null) return 0;
      const { events, held } = await readCommitted(q, cursor, this.#batchSize);
      if (held) this.#loop.soon(HELD_RETRY_MS);
      const last = events.at(-1);
      if (last === undefined) return 0;
      await handler(
        q,
        events.map(({ tx_id: _tx, ...event }) => event),
      );
      await q.query('UPDATE event_cursors SET tx_id = $2::xid8, event_id = $3, updated_at = now() WHERE subscriber = $1', [name, last.tx_id, last.id]);
      return events.length;
    });
  }

  async #lockCursor(q: Tx, name: string): Promise<Cursor | null> {
    const [cursor] = await q.query<Cursor>('SELECT tx_id::text AS tx_id, event_id FROM event_cursors WHERE subscriber = $1 FOR UPDATE SKIP LOCKED', [name]);
    if (cursor !== undefined) return cursor;
    // First run of this subscriber: it starts at the end of the log (history is not replayed), at
    // the last event no running transaction can still come before.
    const [created] = await q.query<Cursor>(
      `INSERT INTO event_cursors (subscriber, tx_id, event_id)
       SELECT $1, coalesce(last.tx_id, '0'::xid8), coalesce(last.id, 0)
       FROM (VALUES (1)) AS one LEFT JOIN (${LOG_END}) AS last ON true
       ON CONFLICT (subscriber) DO NOTHING
       RETURNING tx_id::text AS tx_id, event_id`,
      [name],
    );
    return created ?? null;
  }
}
