// The SQL of an attempt's end: attempts logged and their deliveries settled, many in one statement;
// a claim given back; and the endpoint's circuit breaker (failures in a row, its deliveries held
// together until a probe time by its health row, released when a probe is delivered).
import type { Queryable } from '../db/db.ts';
import { BREAKER_FAILURES, RETRY_FOR_MS } from './rules.ts';

export interface AttemptRecord {
  deliveryId: number;
  lease: string;
  generation: number;
  at: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  state: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  failures: number;
}

/**
 * Logs attempts and settles their deliveries, in one statement. Only the claim that holds the
 * lease settles a delivery; a redelivery (W2) made while the attempt was in flight stands: the
 * attempt is logged, and the delivery stays pending and due. Returns the ids settled.
 */
export async function recordAttempts(q: Queryable, attempts: readonly AttemptRecord[], now: Date): Promise<Set<number>> {
  if (attempts.length === 0) return new Set();
  const column = <T>(f: (a: AttemptRecord) => T) => attempts.map(f);
  const rows = await q.query<{ id: number }>(
    `WITH a AS (
       SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::int[], $4::timestamptz[], $5::int[], $6::int[], $7::text[], $8::text[],
         $9::timestamptz[], $10::int[]) AS a(delivery_id, lease, generation, at, status_code, duration_ms, error, state, next_attempt_at, failures)
     ), logged AS (
       INSERT INTO webhook_attempts (delivery_id, at, status_code, duration_ms, error)
       SELECT delivery_id, at, status_code, duration_ms, error FROM a
     )
     UPDATE webhook_deliveries d SET lease = NULL, locked_until = NULL, attempts = d.attempts + 1, updated_at = $11,
       state = CASE WHEN d.generation = a.generation THEN a.state ELSE d.state END,
       next_attempt_at = CASE WHEN d.generation = a.generation THEN a.next_attempt_at ELSE d.next_attempt_at END,
       failures = CASE WHEN d.generation = a.generation THEN a.failures ELSE d.failures END,
       delivered_at = CASE WHEN d.generation = a.generation AND a.state = 'delivered' THEN $11 ELSE d.delivered_at END
     FROM a
     WHERE d.id = a.delivery_id AND d.lease = a.lease
     RETURNING d.id`,
    [
      column((a) => a.deliveryId),
      column((a) => a.lease),
      column((a) => a.generation),
      column((a) => a.at),
      column((a) => a.statusCode),
      column((a) => a.durationMs),
      column((a) => a.error),
      column((a) => a.state),
      column((a) => a.nextAttemptAt),
      column((a) => a.failures),
      now,
    ],
  );
  return new Set(rows.map((r) => r.id));
}

/** Holds a run's claims until `until`, as it goes on: those still this claim's (the same lease)
 * and not run out by `now` are renewed; returns their ids. A row whose lease ran out is left to
 * whichever instance claims it. */
export async function renewClaims(q: Queryable, claims: readonly { id: number; lease: string }[], now: Date, until: Date): Promise<Set<number>> {
  const rows = await q.query<{ id: number }>(
    `UPDATE webhook_deliveries d SET locked_until = $4
     FROM unnest($1::bigint[], $2::uuid[]) AS c(id, lease) WHERE d.id = c.id AND d.lease = c.lease AND d.locked_until > $3
     RETURNING d.id`,
    [claims.map((c) => c.id), claims.map((c) => c.lease), now, until],
  );
  return new Set(rows.map((r) => r.id));
}

/** Gives claims back without an attempt (the service is stopping, or a run stopped at a failure):
 * due again at once, anywhere. */
export async function releaseClaims(q: Queryable, claims: readonly { id: number; lease: string }[]): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries d SET lease = NULL, locked_until = NULL
     FROM unnest($1::bigint[], $2::uuid[]) AS c(id, lease) WHERE d.id = c.id AND d.lease = c.lease`,
    [claims.map((c) => c.id), claims.map((c) => c.lease)],
  );
}

export interface EndpointHealth {
  failures: number;
  failing_since: string;
  open_until: string | null;
}

/** Counts `failed` more attempts in a row of the endpoint; returns where it stands. */
export async function noteFailures(q: Queryable, endpointId: number, failed: number, now: Date): Promise<EndpointHealth> {
  const [row] = await q.query<EndpointHealth>(
    `INSERT INTO webhook_endpoint_health AS h (endpoint_id, failures, failing_since) VALUES ($1, $2, $3)
     ON CONFLICT (endpoint_id) DO UPDATE SET failures = h.failures + $2, failing_since = coalesce(h.failing_since, $3)
     RETURNING failures, failing_since, open_until`,
    [endpointId, failed, now],
  );
  return row as EndpointHealth;
}

/**
 * Opens the endpoint's breaker until `until` (unless it is open with a probe time to come, or its
 * failures in a row are no longer enough: another instance's delivered attempt closed it between
 * this instance's count and this statement, and a breaker opened then would never be closed). The
 * open breaker alone holds the endpoint's deliveries (the claim takes none of an endpoint whose
 * probe time is to come), so opening it writes one row, whatever the backlog; W1 shows the probe
 * time as their next attempt. Deliveries whose 24 hours of retries are over are failed when it
 * opens. Returns whether it opened, and how many were failed.
 */
export async function openBreaker(q: Queryable, endpointId: number, until: Date, now: Date): Promise<{ opened: boolean; failed: number }> {
  const [row] = await q.query<{ opened: boolean; failed: number }>(
    `WITH opened AS (
       UPDATE webhook_endpoint_health SET open_until = $2
       WHERE endpoint_id = $1 AND failures >= $5 AND (open_until IS NULL OR open_until <= $3)
       RETURNING 1
     ), expired AS (
       UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, updated_at = $3
       WHERE endpoint_id = $1 AND state = 'pending' AND lease IS NULL AND retry_since <= $3::timestamptz - $4 * interval '1 millisecond'
         AND EXISTS (SELECT 1 FROM opened)
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM opened) AS opened, (SELECT count(*)::int FROM expired) AS failed`,
    [endpointId, until, now, RETRY_FOR_MS, BREAKER_FAILURES],
  );
  return row ?? { opened: false, failed: 0 };
}

/**
 * An attempt of the endpoint was delivered: no failures in a row, and when its breaker was open,
 * every delivery it held is due now. Returns whether the breaker was open.
 */
export async function closeBreaker(q: Queryable, endpointId: number, now: Date): Promise<boolean> {
  const [row] = await q.query<{ was_open: boolean }>(
    `WITH old AS (
       SELECT open_until FROM webhook_endpoint_health WHERE endpoint_id = $1 FOR UPDATE
     ), closed AS (
       UPDATE webhook_endpoint_health SET failures = 0, failing_since = NULL, open_until = NULL WHERE endpoint_id = $1 RETURNING 1
     ), released AS (
       UPDATE webhook_deliveries SET next_attempt_at = $2, updated_at = $2
       WHERE endpoint_id = $1 AND state = 'pending' AND next_attempt_at > $2 AND lease IS NULL
         AND EXISTS (SELECT 1 FROM old WHERE open_until IS NOT NULL)
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM old WHERE open_until IS NOT NULL) AS was_open`,
    [endpointId, now],
  );
  return row?.was_open === true;
}
