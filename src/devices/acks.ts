// Device acks arrive one by one from the broker; they are recorded in batches, one statement for
// all the acks that came while the previous statement ran. A feature that acts on the acks of its
// devices (radio: an announcement was played) registers a handler, which runs in the transaction
// that records them; batches without such acks stay one statement.
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { recordAcks, type AckRecord, type AckedMessage } from './store.ts';
import type { GatewayLogger } from './transport.ts';
import { deviceOfInboxTopic, type DeviceIdentity } from './wire.ts';

export type { AckedMessage } from './store.ts';

/** Acts on the first acks of messages to one kind of device, in the transaction recording them. */
export type AckHandler = (q: Tx, acked: readonly AckedMessage[], now: Date) => Promise<void>;

const MAX_BATCH = 500;

const kindOf = (topic: string) => deviceOfInboxTopic(topic)?.kind ?? null;

export class AckBatcher {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: GatewayLogger;
  readonly #handlers = new Map<string, { kind: DeviceIdentity['kind']; handle: AckHandler }>();
  #pending: AckRecord[] = [];
  #flushing: Promise<void> | null = null;

  constructor(db: Db, clock: Clock, log: GatewayLogger) {
    this.#db = db;
    this.#clock = clock;
    this.#log = log;
  }

  /** A handler by name: registering a name again replaces it (apps sharing one gateway). */
  onAcked(name: string, kind: DeviceIdentity['kind'], handle: AckHandler): void {
    this.#handlers.set(name, { kind, handle });
  }

  /** Queues an ack; returns the flush it started (to be tracked), or null if one is already running. */
  add(ack: AckRecord): Promise<void> | null {
    this.#pending.push(ack);
    if (this.#flushing !== null) return null;
    this.#flushing = this.#flush();
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        await this.#record(this.#pending.splice(0, MAX_BATCH), this.#clock.now());
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** A batch that fails is split until the acks that fail are alone: one bad ack (a body the
   * database refuses) loses no other. A database that is away fails them all at once. */
  async #record(batch: AckRecord[], now: Date): Promise<void> {
    try {
      await this.#recordBatch(batch, now);
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // Not lost for good: the message is redelivered and the device acks it again.
        this.#log.error({ err, acks: batch.length }, 'could not record device acks');
        return;
      }
      if (batch.length === 1) {
        // The database refuses this ack's body (a NUL, a lone surrogate): the ack itself still
        // counts, without its body, or the message would be redelivered and replayed forever.
        const [ack] = batch as [AckRecord];
        if (Object.keys(ack.body).length === 0) {
          this.#log.error({ err }, 'could not record a device ack');
          return;
        }
        this.#log.warn({ topic: ack.topic }, 'a device ack whose body the database refuses was recorded without its body');
        await this.#record([{ ...ack, body: {} }], now);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.#record(batch.slice(0, half), now);
      await this.#record(batch.slice(half), now);
    }
  }

  async #recordBatch(batch: readonly AckRecord[], now: Date): Promise<void> {
    const kinds = new Set(batch.map((a) => kindOf(a.topic)));
    const handlers = [...this.#handlers.values()].filter((h) => kinds.has(h.kind));
    if (handlers.length === 0) {
      await this.#db.statement((q) => recordAcks(q, batch, now));
      return;
    }
    await this.#db.tx(async (q) => {
      const acked = await recordAcks(q, batch, now);
      for (const h of handlers) {
        const mine = acked.filter((a) => kindOf(a.topic) === h.kind);
        if (mine.length > 0) await h.handle(q, mine, now);
      }
    });
  }
}
