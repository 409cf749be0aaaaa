// Device acks arrive one by one from the broker; they are recorded in batches, one statement for
// all the acks that came while the previous statement ran.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { recordAcks, type AckRecord } from './store.ts';
import type { GatewayLogger } from './transport.ts';

const MAX_BATCH = 500;

export class AckBatcher {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: GatewayLogger;
  #pending: AckRecord[] = [];
  #flushing: Promise<void> | null = null;

  constructor(db: Db, clock: Clock, log: GatewayLogger) {
    this.#db = db;
    this.#clock = clock;
    this.#log = log;
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
        const batch = this.#pending.splice(0, MAX_BATCH);
        try {
          await recordAcks(this.#db, batch, this.#clock.now());
        } catch (err) {
          // Not lost for good: the message is redelivered and the device acks it again.
          this.#log.error({ err, acks: batch.length }, 'could not record device acks');
        }
      }
    } finally {
      this.#flushing = null;
    }
  }
}
