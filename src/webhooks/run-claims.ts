// A run's hold on its store's deliveries: the leases its claim set, renewed as the run goes, so
// that a long run (a slow receiver) keeps its store while a dead instance's claims run out one
// lease after its last renewal.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { releaseClaims, renewClaims } from './attempt-store.ts';
import type { ClaimedDelivery } from './store.ts';

export interface RunClaimsDeps {
  db: Db;
  clock: Clock;
  leaseMs: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void } | undefined;
}

export class RunClaims {
  readonly #deps: RunClaimsDeps;
  readonly #run: readonly ClaimedDelivery[];
  /** When the leases end, by the service's clock (what the database compares) and by this
   * process's monotonic one (which no clock step moves). */
  #until: number;
  #deadline: number;
  /** Attempts that ended but are not logged yet: their leases are held with the rest. */
  readonly unlogged = new Set<number>();

  /** `claimedAt` and `claimedTick` (performance.now()) were read together, before the claim's statement. */
  constructor(deps: RunClaimsDeps, run: readonly ClaimedDelivery[], claimedAt: Date, claimedTick: number) {
    this.#deps = deps;
    this.#run = run;
    this.#until = claimedAt.getTime() + deps.leaseMs;
    this.#deadline = claimedTick + deps.leaseMs;
  }

  /**
   * Before the run's attempt of `run[next]`: once half the lease is gone (by either clock,
   * whichever says less is left), the leases of the rest of the run and of its attempts not logged
   * yet are renewed; a fast run costs no statement. False when the run must stop: its leases ran
   * out (this instance stalled; another may send the store's deliveries now) or another instance
   * took some of them.
   */
  async keep(next: number): Promise<boolean> {
    const { db, clock, leaseMs, log } = this.#deps;
    const now = clock.now().getTime();
    const started = performance.now();
    const left = Math.min(this.#until - now, this.#deadline - started);
    if (left >= leaseMs / 2) return true;
    const rest = this.#run.slice(next);
    if (left <= 0) {
      // Nothing is written: another instance may be claiming these rows now, and a release that
      // locked some of them would make its claim skip those (and send the later ones first).
      log?.warn({ delivery: rest[0]?.id }, 'a webhook run outlived its claims; it stops, and its deliveries go to whichever instance claims them');
      return false;
    }
    const held = this.#run.filter((d, k) => k >= next || this.unlogged.has(d.id));
    let renewed: Set<number>;
    try {
      renewed = await db.statement((q) => renewClaims(q, held, new Date(now), new Date(now + leaseMs)));
    } catch (err) {
      log?.error({ err, delivery: rest[0]?.id }, "could not renew a webhook run's claims; it stops, and its claims run out");
      return false;
    }
    // From before the statement (bounded by the database's statement timeout, far less than the
    // lease), so the hold is never thought longer than it is.
    this.#until = now + leaseMs;
    this.#deadline = started + leaseMs;
    if (rest.every((d) => renewed.has(d.id))) return true;
    // Another instance took some of the rest over: what is still this run's is given back, in
    // order behind what the other instance sends.
    log?.warn({ delivery: rest[0]?.id }, "another instance took over a webhook run's store; the run stops");
    const mine = rest.filter((d) => renewed.has(d.id));
    if (mine.length > 0) {
      await db
        .statement((q) => releaseClaims(q, mine))
        .catch((err: unknown) => log?.error({ err, delivery: mine[0]?.id }, "could not give back a webhook run's claims; they run out"));
    }
    return false;
  }
}
