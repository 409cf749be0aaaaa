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
//
// This file is the worker: the claim and the runs in flight. A run of a store's deliveries is
// run.ts (its hold on their claims run-claims.ts), one attempt attempt.ts, the batched log of
// attempts attempt-log.ts, the endpoints' circuit breakers breaker.ts (their SQL attempt-store.ts).
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { WorkLoop } from '../work/loop.ts';
import { AttemptLog } from './attempt-log.ts';
import { attemptDelivery, type AttemptDeps } from './attempt.ts';
import { EndpointBreakers } from './breaker.ts';
import { WebhookConnections } from './connections.ts';
import { runDeliveries, type RunDeps } from './run.ts';
import { claimDue } from './store.ts';

export interface DelivererLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DelivererOptions {
  db: Db;
  clock: Clock;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** PUBLIC_BASE_URL: chat cards link to the staff app there. */
  publicBaseUrl?: string;
  /** The guarded connections to share (testWebhook sends over them too); made here when absent. */
  connections?: WebhookConnections;
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

export class WebhookDeliverer {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: DelivererLogger | undefined;
  /** Kept-alive connections per origin, with the address guard. */
  readonly #connections: WebhookConnections;
  readonly #maxInFlight: number;
  readonly #perEndpoint: number;
  readonly #leaseMs: number;
  /** Runs in flight (a store's deliveries, one at a time), by a number of their own. */
  readonly #inFlight = new Map<number, InFlight>();
  #runs = 0;
  readonly #runLength: number;
  readonly #stopping = new AbortController();
  /** One claim at a time in this instance. */
  readonly #loop: WorkLoop<number>;
  /** What a run needs: its attempts, and the log they go to (which feeds the breakers). */
  readonly #runDeps: RunDeps;

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
    this.#connections = opts.connections ?? new WebhookConnections({ allowPrivate: opts.allowPrivate, perOrigin: this.#perEndpoint });
    const timeoutMs = opts.timeoutMs ?? 10_000;
    // A store's due deliveries claimed together and sent one after the other: a busy store costs
    // one claim per run, not one per event.
    this.#runLength = opts.runLength ?? 20;
    // Far longer than an attempt can take (its own time limit), so a claim never runs out while
    // its POST is in flight, whatever the wait for a connection; a run renews it with half left,
    // which leaves room for an attempt and for a skew between the clocks of hosts of 20 s.
    this.#leaseMs = opts.leaseMs ?? Math.max(60_000, timeoutMs * 6);
    this.#loop = new WorkLoop(() => this.#claim(), {
      pollMs: opts.pollMs ?? 1_000,
      onError: (err) => this.#log?.error({ err }, 'webhook deliverer failed; retrying'),
      wakeOn: { commits: this.#db.commits, signal: 'webhooks' },
    });
    const attemptDeps: AttemptDeps = {
      clock: this.#clock,
      connections: this.#connections,
      timeoutMs,
      bodyCap: opts.bodyCap ?? 64 * 1024,
      signal: this.#stopping.signal,
      publicBaseUrl: opts.publicBaseUrl ?? 'http://localhost:3000',
    };
    // A breaker that closes makes the deliveries it held due: claim them.
    const breakers = new EndpointBreakers({ db: this.#db, log: this.#log, released: () => this.#loop.wake() });
    this.#runDeps = {
      db: this.#db,
      clock: this.#clock,
      leaseMs: this.#leaseMs,
      log: this.#log,
      attempt: (delivery) => attemptDelivery(attemptDeps, delivery),
      attemptLog: new AttemptLog({ db: this.#db, clock: this.#clock, log: this.#log, breakers }),
    };
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

  /** Claims what is due (runs of a store's deliveries) within the room left, and starts the runs. */
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
      const promise = runDeliveries(this.#runDeps, run, claimedAt, claimedTick)
        .catch((err: unknown) => this.#log?.error({ err, delivery: first.id }, 'could not record a webhook attempt; it is retried when its claim ends'))
        .finally(() => {
          this.#inFlight.delete(key);
          this.#loop.wake();
        });
      this.#inFlight.set(key, { endpointId: first.endpoint_id, promise });
    }
    return claimed;
  }
}
