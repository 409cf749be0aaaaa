// The delivery worker: claims due deliveries (a lease each, in a short statement), POSTs them
// outside any transaction, then logs each attempt and settles its delivery (another short
// statement). Attempts run in parallel, at most `maxInFlight` per instance and `perEndpoint` per
// endpoint, so a slow or dead endpoint holds only its own slots, and never a database connection.
// The lease makes one attempt per delivery in flight across instances; a delivery whose instance
// died is claimed again once its lease ends, so every delivery is attempted at least once.
//
// Woken by commits that wrote deliveries (the "webhooks" signal, from any instance), by an attempt
// that ended (the next delivery of its store may go), and by a poll (retries falling due).
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { eventPayload } from '../events/payload.ts';
import { postWebhook, type PostResult } from './post.ts';
import { settle, signedHeaders } from './rules.ts';
import { claimDue, recordAttempt, releaseClaim, type ClaimedDelivery } from './store.ts';
import { WorkLoop } from '../jobs/loop.ts';

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
  /** The whole exchange of one attempt, connection to the end of the answer. */
  timeoutMs?: number;
  /** How long a claim holds a delivery: longer than an attempt can take, with room to record it. */
  leaseMs?: number;
  /** Bytes of an answer's body read at most. */
  bodyCap?: number;
}

interface InFlight {
  endpointId: number;
  promise: Promise<void>;
}

export class WebhookDeliverer {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: DelivererLogger | undefined;
  readonly #allowPrivate: boolean;
  readonly #maxInFlight: number;
  readonly #perEndpoint: number;
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #bodyCap: number;
  readonly #inFlight = new Map<number, InFlight>();
  readonly #stopping = new AbortController();
  /** One claim at a time in this instance. */
  readonly #loop: WorkLoop<number>;

  constructor(opts: DelivererOptions) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#allowPrivate = opts.allowPrivate;
    // Attempts hold a socket, not a database connection: room for many endpoints at once, so a few
    // hanging ones (at most perEndpoint slots each) cannot take every slot.
    this.#maxInFlight = opts.maxInFlight ?? 256;
    this.#perEndpoint = opts.perEndpoint ?? 4;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    // Far longer than an attempt can take (its own time limit), so a claim never runs out while
    // its POST is in flight, whatever the wait for a connection or the clocks of other hosts.
    this.#leaseMs = opts.leaseMs ?? Math.max(60_000, this.#timeoutMs * 6);
    this.#bodyCap = opts.bodyCap ?? 64 * 1024;
    this.#loop = new WorkLoop(() => this.#claim(), {
      pollMs: opts.pollMs ?? 1_000,
      onError: (err) => this.#log?.error({ err }, 'webhook deliverer failed; retrying'),
      wakeOn: { commits: this.#db.commits, signal: 'webhooks' },
    });
  }

  /** Attempts in flight in this instance. */
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
    const claimed = await this.#db.statement((q) =>
      claimDue(q, this.#clock.now(), { limit: room, perEndpoint: this.#perEndpoint, busy, leaseMs: this.#leaseMs }),
    );
    for (const delivery of claimed) {
      const promise = this.#attempt(delivery)
        .catch((err: unknown) => this.#log?.error({ err, delivery: delivery.id }, 'could not record a webhook attempt; it is retried when its claim ends'))
        .finally(() => {
          this.#inFlight.delete(delivery.id);
          this.#loop.wake();
        });
      this.#inFlight.set(delivery.id, { endpointId: delivery.endpoint_id, promise });
    }
    return claimed.length;
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    const at = this.#clock.now();
    const body = JSON.stringify(eventPayload(delivery.event, delivery.store_number));
    const started = performance.now();
    const result: PostResult = await postWebhook(
      { url: delivery.url, body, headers: signedHeaders(delivery.secret, delivery.event.uuid, body, at) },
      { timeoutMs: this.#timeoutMs, allowPrivate: this.#allowPrivate, bodyCap: this.#bodyCap, signal: this.#stopping.signal },
    );
    const durationMs = Math.round(performance.now() - started);
    if (result.aborted) {
      await this.#db.statement((q) => releaseClaim(q, delivery.id, delivery.lease));
      return;
    }
    const now = this.#clock.now();
    const outcome = settle(result, { failures: delivery.failures, retrySince: new Date(delivery.retry_since) }, now, Math.random());
    const settled = await this.#db.statement((q) =>
      recordAttempt(q, {
        deliveryId: delivery.id, lease: delivery.lease, generation: delivery.generation, at, statusCode: result.statusCode, durationMs,
        error: result.error, state: outcome.state, nextAttemptAt: outcome.nextAttemptAt, failures: outcome.failures, now,
      }),
    );
    if (!settled) this.#log?.warn({ delivery: delivery.id }, 'a webhook attempt outlived its claim; logged, the delivery left as it is');
    if (outcome.state === 'failed') this.#log?.warn({ delivery: delivery.id, endpoint: delivery.endpoint_id }, 'webhook delivery failed for good');
  }
}
