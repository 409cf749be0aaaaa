// The endpoints' circuit breakers, as this instance sees its logged attempts: an endpoint's attempts
// failing BREAKER_FAILURES times in a row hold all of its deliveries until a probe time (one row),
// so a dead endpoint costs one attempt per probe, not one per event; a delivered attempt closes it
// and makes what it held due. Its statements run one after the other in their own queue, beside the
// attempt log, so that a dead endpoint's bookkeeping never holds back the log of another's attempts.
import type { Db } from '../db/db.ts';
import { closeBreaker, noteFailures, openBreaker } from './attempt-store.ts';
import type { EndedAttempt } from './attempt.ts';
import type { DelivererLogger } from './deliverer.ts';
import { BREAKER_FAILURES, breakerDelayMs } from './rules.ts';

/** What one endpoint's breaker has to do for a logged batch. */
interface BreakerWork {
  close: boolean;
  failedSince: number;
}

export class EndpointBreakers {
  readonly #db: Db;
  readonly #log: DelivererLogger | undefined;
  /** A breaker closed and released the deliveries it held: they are due now. */
  readonly #released: () => void;
  /** The breakers' statements, one after the other. */
  #queue: Promise<void> = Promise.resolve();
  /** Endpoints this instance saw fail since their last delivered attempt (their breaker is closed
   * when one is delivered). */
  readonly #failing = new Set<number>();

  constructor(deps: { db: Db; log: DelivererLogger | undefined; released: () => void }) {
    this.#db = deps.db;
    this.#log = deps.log;
    this.#released = deps.released;
  }

  /** Takes a logged batch into account. Returns the endpoints whose breakers have work to do for
   * it, and when that work is done (so that the next claim sees each breaker as it is). */
  afterLogged(batch: readonly EndedAttempt[], now: Date): { watched: ReadonlySet<number>; done: Promise<void> } {
    const work = this.#workOf(batch);
    if (work.size === 0) return { watched: new Set(), done: Promise.resolve() };
    const done = this.#queue
      .then(() => this.#watch(work, now))
      .catch((err: unknown) => this.#log?.error({ err }, "could not update a webhook endpoint's breaker; its next attempts do"));
    this.#queue = done;
    return { watched: new Set(work.keys()), done };
  }

  /** What the breaker has to do for a logged batch, by endpoint: close (a delivered attempt of an
   * endpoint seen failing) and count the failures since the last delivered attempt. An endpoint
   * that just delivers has nothing to do. */
  #workOf(batch: readonly EndedAttempt[]): Map<number, BreakerWork> {
    const byEndpoint = new Map<number, { delivered: boolean; knownFailing: boolean; failedSince: number }>();
    for (const { delivery, record } of batch) {
      const e = byEndpoint.get(delivery.endpoint_id) ?? { delivered: false, knownFailing: false, failedSince: 0 };
      e.knownFailing ||= delivery.endpoint_failures > 0;
      if (record.state === 'delivered') {
        e.delivered = true;
        e.failedSince = 0;
      } else e.failedSince++;
      byEndpoint.set(delivery.endpoint_id, e);
    }
    const work = new Map<number, BreakerWork>();
    for (const [endpointId, e] of byEndpoint) {
      const close = e.delivered && (e.knownFailing || this.#failing.has(endpointId));
      if (close) this.#failing.delete(endpointId);
      if (e.failedSince > 0) this.#failing.add(endpointId);
      if (close || e.failedSince > 0) work.set(endpointId, { close, failedSince: e.failedSince });
    }
    return work;
  }

  async #watch(work: ReadonlyMap<number, BreakerWork>, now: Date): Promise<void> {
    for (const [endpointId, e] of work) {
      if (e.close && (await this.#db.statement((q) => closeBreaker(q, endpointId, now)))) this.#released();
      if (e.failedSince === 0) continue;
      const health = await this.#db.statement((q) => noteFailures(q, endpointId, e.failedSince, now));
      if (health.failures < BREAKER_FAILURES) continue;
      const until = new Date(now.getTime() + breakerDelayMs(now.getTime() - new Date(health.failing_since).getTime(), Math.random()));
      const { opened, failed } = await this.#db.statement((q) => openBreaker(q, endpointId, until, now));
      if (opened) {
        this.#log?.warn(
          { endpoint: endpointId, failures: health.failures, failed, until: until.toISOString() },
          'webhook endpoint failing: its deliveries wait for a probe',
        );
      }
    }
  }
}
