// The delivery worker: claims due deliveries (a lease each, in a short statement), POSTs them
// outside any transaction, then logs the attempts and settles their deliveries (one statement for
// the attempts that ended meanwhile). Attempts run in parallel, at most `maxInFlight` per instance
// and `perEndpoint` per endpoint, so a slow or dead endpoint holds only its own slots, and never a
// database connection; an endpoint that keeps failing has its breaker opened: its deliveries wait
// together for a probe, so a dead endpoint costs one attempt per probe time, not one per event.
// The lease makes one attempt per delivery in flight across instances; a run renews the leases of
// the rest of its deliveries as it goes, so those of an instance that died run out one lease after
// its last renewal and are claimed again: every delivery is attempted at least once.
//
// Woken by commits that wrote deliveries (the "webhooks" signal, from any instance), by an attempt
// that ended (the next delivery of its store may go), and by a poll (retries falling due).
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { eventPayload } from '../events/payload.ts';
import { WebhookConnections } from './connections.ts';
import { postWebhook, type PostResult } from './post.ts';
import { BREAKER_FAILURES, breakerDelayMs, settle, signedHeaders } from './rules.ts';
import { claimDue, type ClaimedDelivery } from './store.ts';
import { closeBreaker, noteFailures, openBreaker, recordAttempts, releaseClaims, type AttemptRecord } from './attempt-store.ts';
import { RunClaims } from './run-claims.ts';
import { WorkLoop } from '../work/loop.ts';

export interface DelivererLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DelivererOptions {
  db: Db;
  clock: Clock;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  log?: DelivererLogger;
  pollMs?: number;
  maxInFlight?: number;
  perEndpoint?: number;
  /** A store's deliveries claimed together at most (sent one at a time, in order). */
  runLength?: number;
  /** The whole exchange of one attempt, connection to the end of the answer. */
  timeoutMs?: number;
  /** How long a claim holds a delivery before its run renews it: far longer than an attempt can
   * take, with room to record it; a dead instance's deliveries wait at most that long. */
  leaseMs?: number;
  /** Bytes of an answer's body read at most. */
  bodyCap?: number;
}

interface InFlight {
  endpointId: number;
  promise: Promise<void>;
}

/** An attempt that ended, waiting to be logged with the others that ended meanwhile. */
interface Ended {
  delivery: ClaimedDelivery;
  record: AttemptRecord;
  logged: () => void;
  failed: (err: unknown) => void;
}

export class WebhookDeliverer {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: DelivererLogger | undefined;
  /** Kept-alive connections per origin, with the address guard. */
  readonly #connections: WebhookConnections;
  readonly #maxInFlight: number;
  readonly #perEndpoint: number;
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #bodyCap: number;
  /** Runs in flight (a store's deliveries, one at a time), by a number of their own. */
  readonly #inFlight = new Map<number, InFlight>();
  #runs = 0;
  readonly #runLength: number;
  readonly #stopping = new AbortController();
  /** One claim at a time in this instance. */
  readonly #loop: WorkLoop<number>;
  /** Attempts that ended, logged together by one statement at a time. */
  #ended: Ended[] = [];
  #logging = false;
  /** The breakers' statements, one after the other, beside the logging of attempts. */
  #breakers: Promise<void> = Promise.resolve();
  /** Endpoints this instance saw fail since their last delivered attempt (their breaker is closed
   * when one is delivered). */
  readonly #failing = new Set<number>();

  constructor(opts: DelivererOptions) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log;
    // Attempts hold a socket, not a database connection: room for many endpoints at once, so a few
    // hanging ones (at most perEndpoint slots each) cannot take every slot.
    this.#maxInFlight = opts.maxInFlight ?? 256;
    // WEBHOOK_ENDPOINT_CONCURRENCY: a store's events go one at a time, so this is how many of an
    // endpoint's stores are served at once.
    this.#perEndpoint = opts.perEndpoint ?? 32;
    // As many connections to an origin as attempts to an endpoint: an endpoint never waits for one
    // unless it shares its origin with another.
    this.#connections = new WebhookConnections({ allowPrivate: opts.allowPrivate, perOrigin: this.#perEndpoint });
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    // A store's due deliveries claimed together and sent one after the other: a busy store costs
    // one claim per run, not one per event.
    this.#runLength = opts.runLength ?? 20;
    // Far longer than an attempt can take (its own time limit), so a claim never runs out while
    // its POST is in flight, whatever the wait for a connection; a run renews it with half left,
    // which leaves room for an attempt and for a skew between the clocks of hosts of 20 s.
    this.#leaseMs = opts.leaseMs ?? Math.max(60_000, this.#timeoutMs * 6);
    this.#bodyCap = opts.bodyCap ?? 64 * 1024;
    this.#loop = new WorkLoop(() => this.#claim(), {
      pollMs: opts.pollMs ?? 1_000,
      onError: (err) => this.#log?.error({ err }, 'webhook deliverer failed; retrying'),
      wakeOn: { commits: this.#db.commits, signal: 'webhooks' },
    });
  }

  /** Runs of attempts in flight in this instance (at most one per endpoint and store). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  start(): void {
    if (this.#stopping.signal.aborted) return;
    this.#loop.start();
  }

  /** Stops claiming, aborts the attempts in flight and gives their deliveries back (due at once). */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop.stop();
    await this.settle();
    this.#connections.close();
  }

  /** Every due delivery attempted, and each one that falls due meanwhile (the next of a store),
   * until nothing is due; resolves when their attempts are logged. Returns how many ran. */
  async runDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      attempts += await this.#loop.runNow();
      if (this.#inFlight.size === 0) return attempts;
      // An attempt that ends may let the next delivery of its store go: claim again after each.
      await Promise.race([...this.#inFlight.values()].map((f) => f.promise));
    }
  }

  /** Resolves when no attempt is in flight. */
  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()].map((f) => f.promise));
  }

  async #claim(): Promise<number> {
    const room = this.#maxInFlight - this.#inFlight.size;
    if (room <= 0 || this.#stopping.signal.aborted) return 0;
    const busy = new Map<number, number>();
    for (const f of this.#inFlight.values()) busy.set(f.endpointId, (busy.get(f.endpointId) ?? 0) + 1);
    const claimedAt = this.#clock.now();
    const claimedTick = performance.now();
    const runs = await this.#db.statement((q) =>
      claimDue(q, claimedAt, { limit: room, perEndpoint: this.#perEndpoint, busy, runLength: this.#runLength, leaseMs: this.#leaseMs }),
    );
    let claimed = 0;
    for (const run of runs) {
      const first = run[0];
      if (first === undefined) continue;
      claimed += run.length;
      const key = ++this.#runs;
      const promise = this.#run(run, claimedAt, claimedTick)
        .catch((err: unknown) => this.#log?.error({ err, delivery: first.id }, 'could not record a webhook attempt; it is retried when its claim ends'))
        .finally(() => {
          this.#inFlight.delete(key);
          this.#loop.wake();
        });
      this.#inFlight.set(key, { endpointId: first.endpoint_id, promise });
    }
    return claimed;
  }

  /** A store's claimed deliveries, one at a time, in order. After a failed attempt (or when the
   * service stops) the rest are given back, due at once (unless the endpoint's breaker opens). */
  async #run(run: readonly ClaimedDelivery[], claimedAt: Date, claimedTick: number): Promise<void> {
    const logged: Promise<void>[] = [];
    const hold = new RunClaims({ db: this.#db, clock: this.#clock, leaseMs: this.#leaseMs, log: this.#log }, run, claimedAt, claimedTick);
    for (let i = 0; i < run.length; i++) {
      if (!(await hold.keep(i))) break;
      const attempt = await this.#attempt(run[i] as ClaimedDelivery);
      const rest = attempt?.delivered === true ? [] : run.slice(attempt === null ? i : i + 1);
      if (rest.length > 0)
        await this.#db.statement((q) =>
          releaseClaims(
            q,
            rest.map((d) => ({ id: d.id, lease: d.lease })),
          ),
        );
      if (attempt === null) break;
      const id = attempt.delivery.id;
      hold.unlogged.add(id);
      const log = this.#logEnded(attempt).finally(() => hold.unlogged.delete(id));
      // Handled now: if a later statement of this run throws, #run rejects before awaiting it.
      log.catch(() => undefined);
      logged.push(log);
      if (!attempt.delivered) break;
    }
    await Promise.all(logged);
  }

  /** One attempt; null when the service stopped it. */
  async #attempt(delivery: ClaimedDelivery): Promise<(Omit<Ended, 'logged' | 'failed'> & { delivered: boolean }) | null> {
    const at = this.#clock.now();
    const body = JSON.stringify(eventPayload(delivery.event, delivery.store_number));
    const started = performance.now();
    const result: PostResult = await postWebhook(
      { url: delivery.url, body, headers: signedHeaders(delivery.secret, delivery.event.uuid, body, at) },
      { timeoutMs: this.#timeoutMs, connections: this.#connections, bodyCap: this.#bodyCap, signal: this.#stopping.signal },
    );
    const durationMs = Math.round(performance.now() - started);
    if (result.aborted) return null;
    const outcome = settle(result, { failures: delivery.failures, retrySince: new Date(delivery.retry_since) }, this.#clock.now(), Math.random());
    return {
      delivery,
      delivered: outcome.state === 'delivered',
      record: {
        deliveryId: delivery.id,
        lease: delivery.lease,
        generation: delivery.generation,
        at,
        statusCode: result.statusCode,
        durationMs,
        error: result.error,
        state: outcome.state,
        nextAttemptAt: outcome.nextAttemptAt,
        failures: outcome.failures,
      },
    };
  }

  /** Logs an attempt with the others that ended meanwhile: one statement for all of them at a
   * time, those that end during it go in the next. Resolves once it is logged, and once the
   * endpoint's breaker has taken it into account when it has to (a failure, or the first delivered
   * attempt after failures), so the next claim sees the breaker as it is. */
  #logEnded(attempt: Omit<Ended, 'logged' | 'failed'>): Promise<void> {
    const done = new Promise<void>((logged, failed) => this.#ended.push({ ...attempt, logged, failed }));
    this.#logNext();
    return done;
  }

  #logNext(): void {
    if (this.#logging || this.#ended.length === 0) return;
    this.#logging = true;
    const batch = this.#ended.splice(0, 1_000);
    void this.#logBatch(batch).finally(() => {
      this.#logging = false;
      this.#logNext();
    });
  }

  /** Logs a batch; the breaker's statements for it then run in their own queue (#breakers), so
   * that a dead endpoint's bookkeeping never holds back the log of another endpoint's attempts. */
  async #logBatch(batch: readonly Ended[]): Promise<void> {
    const now = this.#clock.now();
    let logged: readonly Ended[] = batch;
    try {
      await this.#record(batch, now);
    } catch (err) {
      // One attempt that cannot be logged (its event removed meanwhile, say) must not leave the
      // others of its batch unlogged and sent again: each is logged alone then, and fails alone.
      if (batch.length === 1) {
        batch[0]?.failed(err);
        return;
      }
      const alone: Ended[] = [];
      for (const e of batch) await this.#record([e], now).then(() => alone.push(e), e.failed);
      logged = alone;
    }
    const watched = this.#breakerWork(logged);
    if (watched.size === 0) {
      for (const e of logged) e.logged();
      return;
    }
    const work = this.#breakers
      .then(() => this.#watchEndpoints(watched, now))
      .catch((err: unknown) => this.#log?.error({ err }, "could not update a webhook endpoint's breaker; its next attempts do"));
    this.#breakers = work;
    for (const e of logged) {
      if (watched.has(e.delivery.endpoint_id)) void work.then(e.logged);
      else e.logged();
    }
  }

  async #record(batch: readonly Ended[], now: Date): Promise<void> {
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

  /** What the breaker has to do for a logged batch, by endpoint: close (a delivered attempt of an
   * endpoint seen failing) and count the failures since the last delivered attempt. An endpoint
   * that just delivers has nothing to do. */
  #breakerWork(batch: readonly Ended[]): Map<number, { close: boolean; failedSince: number }> {
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
    const work = new Map<number, { close: boolean; failedSince: number }>();
    for (const [endpointId, e] of byEndpoint) {
      const close = e.delivered && (e.knownFailing || this.#failing.has(endpointId));
      if (close) this.#failing.delete(endpointId);
      if (e.failedSince > 0) this.#failing.add(endpointId);
      if (close || e.failedSince > 0) work.set(endpointId, { close, failedSince: e.failedSince });
    }
    return work;
  }

  /**
   * The circuit breaker: an endpoint's attempts failing BREAKER_FAILURES times in a row hold all of
   * its deliveries until a probe time (one row), so a dead endpoint costs one attempt per probe,
   * not one per event; a delivered attempt closes it and makes what it held due.
   */
  async #watchEndpoints(work: ReadonlyMap<number, { close: boolean; failedSince: number }>, now: Date): Promise<void> {
    for (const [endpointId, e] of work) {
      if (e.close && (await this.#db.statement((q) => closeBreaker(q, endpointId, now)))) this.#loop.wake();
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
