// A run: a store's claimed deliveries, attempted one at a time, in order, while the run holds their
// claims (run-claims.ts renews them as it goes). After a failed attempt (or when the service stops)
// the rest are given back, due at once (unless the endpoint's breaker opens): a store's events never
// overtake one another.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import type { AttemptLog } from './attempt-log.ts';
import { releaseClaims } from './attempt-store.ts';
import type { EndedAttempt } from './attempt.ts';
import type { DelivererLogger } from './deliverer.ts';
import { RunClaims } from './run-claims.ts';
import type { ClaimedDelivery } from './store.ts';

export interface RunDeps {
  db: Db;
  clock: Clock;
  leaseMs: number;
  log: DelivererLogger | undefined;
  /** One attempt; null when the service stopped it. */
  attempt: (delivery: ClaimedDelivery) => Promise<EndedAttempt | null>;
  attemptLog: AttemptLog;
}

/** Runs a claim's deliveries of one store; resolves once their attempts are logged.
 * `claimedAt` and `claimedTick` (performance.now()) were read together, before the claim. */
export async function runDeliveries(deps: RunDeps, run: readonly ClaimedDelivery[], claimedAt: Date, claimedTick: number): Promise<void> {
  const { db } = deps;
  const logged: Promise<void>[] = [];
  const hold = new RunClaims({ db, clock: deps.clock, leaseMs: deps.leaseMs, log: deps.log }, run, claimedAt, claimedTick);
  for (let i = 0; i < run.length; i++) {
    if (!(await hold.keep(i))) break;
    const attempt = await deps.attempt(run[i] as ClaimedDelivery);
    const rest = attempt?.delivered === true ? [] : run.slice(attempt === null ? i : i + 1);
    if (rest.length > 0)
      await db.statement((q) =>
        releaseClaims(
          q,
          rest.map((d) => ({ id: d.id, lease: d.lease })),
        ),
      );
    if (attempt === null) break;
    const id = attempt.delivery.id;
    hold.unlogged.add(id);
    const log = deps.attemptLog.add(attempt).finally(() => hold.unlogged.delete(id));
    // Handled now: if a later statement of this run throws, the run rejects before awaiting it.
    log.catch(() => undefined);
    logged.push(log);
    if (!attempt.delivered) break;
  }
  await Promise.all(logged);
}
