// The log of ended attempts, in batches: an attempt is logged (and its delivery settled) with the
// others that ended meanwhile, one statement for all of them at a time; those that end during it
// go in the next. Then the endpoints' breakers take the batch into account.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { recordAttempts } from './attempt-store.ts';
import type { EndedAttempt } from './attempt.ts';
import type { EndpointBreakers } from './breaker.ts';
import type { DelivererLogger } from './deliverer.ts';

/** An attempt that ended, waiting to be logged with the others that ended meanwhile. */
interface Waiting extends EndedAttempt {
  logged: () => void;
  failed: (err: unknown) => void;
}

/** Attempts logged in one statement at most. */
const BATCH_MAX = 1_000;

export class AttemptLog {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: DelivererLogger | undefined;
  readonly #breakers: EndpointBreakers;
  #waiting: Waiting[] = [];
  #logging = false;

  constructor(deps: { db: Db; clock: Clock; log: DelivererLogger | undefined; breakers: EndpointBreakers }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#breakers = deps.breakers;
  }

  /** Logs an attempt with the others that ended meanwhile. Resolves once it is logged, and once the
   * endpoint's breaker has taken it into account when it has to (a failure, or the first delivered
   * attempt after failures), so the next claim sees the breaker as it is. */
  add(attempt: EndedAttempt): Promise<void> {
    const done = new Promise<void>((logged, failed) => this.#waiting.push({ ...attempt, logged, failed }));
    this.#next();
    return done;
  }

  #next(): void {
    if (this.#logging || this.#waiting.length === 0) return;
    this.#logging = true;
    const batch = this.#waiting.splice(0, BATCH_MAX);
    void this.#logBatch(batch).finally(() => {
      this.#logging = false;
      this.#next();
    });
  }

  /** Logs a batch; the breakers' statements for it then run in their own queue. */
  async #logBatch(batch: readonly Waiting[]): Promise<void> {
    const now = this.#clock.now();
    let logged: readonly Waiting[] = batch;
    try {
      await this.#record(batch, now);
    } catch (err) {
      // One attempt that cannot be logged (its event removed meanwhile, say) must not leave the
      // others of its batch unlogged and sent again: each is logged alone then, and fails alone.
      if (batch.length === 1) {
        batch[0]?.failed(err);
        return;
      }
      const alone: Waiting[] = [];
      for (const e of batch) await this.#record([e], now).then(() => alone.push(e), e.failed);
      logged = alone;
    }
    const { watched, done } = this.#breakers.afterLogged(logged, now);
    for (const e of logged) {
      if (watched.has(e.delivery.endpoint_id)) void done.then(e.logged);
      else e.logged();
    }
  }

  async #record(batch: readonly Waiting[], now: Date): Promise<void> {
    const settled = await this.#db.statement((q) =>
      recordAttempts(
        q,
        batch.map((e) => e.record),
        now,
      ),
    );
    for (const { delivery, record } of batch) {
      if (!settled.has(delivery.id)) this.#log?.warn({ delivery: delivery.id }, 'a webhook attempt outlived its claim; logged, the delivery left as it is');
      if (record.state === 'failed') this.#log?.warn({ delivery: delivery.id, endpoint: delivery.endpoint_id }, 'webhook delivery failed for good');
    }
  }
}
