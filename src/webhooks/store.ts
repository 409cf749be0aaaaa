// All SQL of webhooks: deliveries written for the events of a batch (the fan-out), claimed for an
// attempt with a lease, settled with the attempt's log line, listed (W1) and sent again (W2).
import type { OrganizationActor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable, Tx } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import type { EventRow } from '../events/log.ts';
import type { WebhookFormat } from '../provisioning/schema.ts';
import type { RequestFacts } from './cards/facts.ts';

/** A timestamptz as the wire wants it inside JSON built by the database. */
const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * A delivery for each event and each endpoint of its organization (of its location, or of all
 * locations) that is enabled and takes its type, in the order of the events, so an endpoint's deliveries are
 * numbered in commit order. An event delivered already to an endpoint is not added again.
 */
export async function insertDeliveries(q: Tx, events: readonly EventRow[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const [row] = await q.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO webhook_deliveries (endpoint_id, event_id, location_key, next_attempt_at, retry_since, created_at, updated_at)
       SELECT w.id, ev.id, coalesce(ev.location_id, 0),
         -- An endpoint whose breaker is open gets its new deliveries at its probe time, as the others.
         greatest($5, (SELECT h.open_until FROM webhook_endpoint_health h WHERE h.endpoint_id = w.id)), $5, $5, $5
       FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[]) WITH ORDINALITY AS ev(id, organization_id, location_id, type, ord)
         JOIN webhook_endpoints w ON w.organization_id = ev.organization_id
           AND (w.location_id IS NULL OR w.location_id = ev.location_id) AND ev.type = ANY (w.events) AND w.enabled
       ORDER BY ev.ord, w.id
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM ins`,
    [events.map((e) => e.id), events.map((e) => e.organization_id), events.map((e) => e.location_id), events.map((e) => e.type), now],
  );
  const n = row?.n ?? 0;
  if (n > 0) q.signal('webhooks');
  return n;
}

/** A delivery claimed for one attempt: its endpoint, its event and the lease that is its claim. */
export interface ClaimedDelivery {
  id: number;
  lease: string;
  generation: number;
  failures: number;
  retry_since: string;
  endpoint_id: number;
  /** The endpoint's failed attempts in a row when it was claimed (its breaker, attempt-store.ts). */
  endpoint_failures: number;
  url: string;
  secret: string;
  /** signed, slack or teams (formats.ts formats each). */
  format: WebhookFormat;
  /** The event's location's language and name (a card says them). */
  language: string | null;
  location_name: string | null;
  /** A chat endpoint's Call for Help card: the request's own facts (null otherwise, or once retention removed it). */
  request: RequestFacts | null;
  event: Pick<EventRow, 'uuid' | 'type' | 'status' | 'created_at' | 'details' | 'location_id' | 'internal_id' | 'organization_id' | 'message'>;
  store_number: string | null;
}

type ClaimedRow = Omit<ClaimedDelivery, 'event'> & ClaimedDelivery['event'];

export interface ClaimLimits {
  /** Runs (stores) to claim at most. */
  limit: number;
  /** Runs in flight per endpoint at most (this instance's): how many of its stores go at once. */
  perEndpoint: number;
  /** This instance's runs in flight, by endpoint. */
  busy: ReadonlyMap<number, number>;
  /** Deliveries of one store claimed together at most, sent one after the other. */
  runLength: number;
  /** How long the claim holds each delivery of a run; the run renews it as it goes (renewClaims). */
  leaseMs: number;
}

/**
 * Claims due deliveries in runs: of an endpoint's deliveries of one location, none while one of
 * them is in flight anywhere, else its oldest due ones (up to runLength; one while the endpoint's
 * breaker is open), which this instance then sends one at a time, in order. Each gets a lease
 * (until now + leaseMs, renewed by the run as it goes) in one statement, so no other instance
 * claims it while its run is in flight: a receiver gets a store's events one at a time, in order,
 * unless one waits for a retry. Returned in runs, each oldest first.
 */
export async function claimDue(q: Queryable, now: Date, limits: ClaimLimits): Promise<ClaimedDelivery[][]> {
  const rows = await q.query<ClaimedRow & { location_key: number }>(
    `WITH RECURSIVE pairs AS (
       -- Every endpoint and store with a pending delivery, one index probe each (not a sort of the queue).
       (SELECT endpoint_id, location_key FROM webhook_deliveries WHERE state = 'pending' ORDER BY endpoint_id, location_key LIMIT 1)
       UNION ALL
       SELECT n.endpoint_id, n.location_key FROM pairs p CROSS JOIN LATERAL (
         SELECT endpoint_id, location_key FROM webhook_deliveries
         WHERE state = 'pending' AND (endpoint_id, location_key) > (p.endpoint_id, p.location_key)
         ORDER BY endpoint_id, location_key LIMIT 1
       ) n
     ), due AS (
       -- Of each store not in flight anywhere, and not of an endpoint whose breaker holds it, the oldest due ones.
       SELECT p.endpoint_id, p.location_key, r.id, r.next_attempt_at, r.k
       FROM pairs p CROSS JOIN LATERAL (
         SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.id) AS k FROM webhook_deliveries d
         WHERE d.endpoint_id = p.endpoint_id AND d.location_key = p.location_key AND d.state = 'pending' AND d.next_attempt_at <= $1
         ORDER BY d.id LIMIT $7::int
       ) r
       WHERE NOT EXISTS (
           -- A probe of the leased index per store (OFFSET 0 keeps it one): a scan of the whole
           -- index, as a join would do, reads every lease ever set since the table's last vacuum.
           SELECT 1 FROM webhook_deliveries f
           WHERE f.endpoint_id = p.endpoint_id AND f.location_key = p.location_key AND f.state = 'pending' AND f.lease IS NOT NULL
             AND f.locked_until > $1
           OFFSET 0
         )
         AND NOT EXISTS (SELECT 1 FROM webhook_endpoint_health eh WHERE eh.endpoint_id = p.endpoint_id AND eh.open_until > $1)
     ), heads AS (
       SELECT due.endpoint_id, due.location_key, due.next_attempt_at, due.id, eh.open_until IS NOT NULL AS probing,
         row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS n,
         -- An endpoint whose breaker is open is probed, at its probe time, by one attempt.
         CASE WHEN eh.open_until IS NOT NULL THEN 1 ELSE $3::int END - coalesce(busy.n, 0) AS room
       FROM due LEFT JOIN unnest($4::int[], $5::int[]) AS busy(endpoint_id, n) ON busy.endpoint_id = due.endpoint_id
         LEFT JOIN webhook_endpoint_health eh ON eh.endpoint_id = due.endpoint_id
       WHERE due.k = 1
     ), chosen AS (
       SELECT endpoint_id, location_key, probing, id AS head FROM heads WHERE n <= room ORDER BY next_attempt_at, id LIMIT $2
     ), locked AS (
       -- A store's run goes to the claim that locks its head: one that another claim holds, or
       -- has leased meanwhile, leaves the whole store to it.
       SELECT d.id FROM webhook_deliveries d JOIN chosen c ON c.head = d.id
       WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease IS NULL OR d.locked_until <= $1)
       FOR UPDATE OF d SKIP LOCKED
     ), picked AS (
       SELECT d.id, d.endpoint_id, d.event_id, d.location_key, due.k FROM webhook_deliveries d
         JOIN due ON due.id = d.id
         JOIN chosen c ON c.endpoint_id = due.endpoint_id AND c.location_key = due.location_key
       WHERE EXISTS (SELECT 1 FROM locked l WHERE l.id = c.head)
         AND due.k <= CASE WHEN c.probing THEN 1 ELSE $7::int END
         AND d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease IS NULL OR d.locked_until <= $1)
       FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries d
     SET lease = gen_random_uuid(), locked_until = $1::timestamptz + $6 * interval '1 millisecond', updated_at = $1
     FROM picked p JOIN webhook_endpoints w ON w.id = p.endpoint_id JOIN events e ON e.id = p.event_id
       LEFT JOIN locations loc ON loc.id = e.location_id LEFT JOIN webhook_endpoint_health eh ON eh.endpoint_id = p.endpoint_id
     WHERE d.id = p.id
     RETURNING d.id, d.lease::text AS lease, d.generation, d.failures, d.retry_since, w.id AS endpoint_id, d.location_key,
       coalesce(eh.failures, 0) AS endpoint_failures, w.url, w.secret, w.format, loc.language, loc.name AS location_name,
       -- Only a chat card reads the request (its waiting time, the customer's words, the option in French).
       CASE WHEN w.format <> 'signed' AND e.type = 'callforhelp' THEN (
         SELECT json_build_object('created_at', ${wireTime('r.created_at')}, 'custom_text', r.custom_text, 'option_text_en', o.text_en,
           'option_text_fr', o.text_fr)
         FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
         WHERE r.id = CASE WHEN e.internal_id ~ '^[0-9]{1,18}$' THEN e.internal_id::bigint END
       ) END AS request,
       e.uuid::text AS uuid, e.type, e.status, e.created_at, e.details, e.location_id, e.internal_id, e.organization_id, e.message,
       loc.store_number`,
    [now, limits.limit, limits.perEndpoint, [...limits.busy.keys()], [...limits.busy.values()], limits.leaseMs, limits.runLength],
  );
  const runs = new Map<string, ClaimedDelivery[]>();
  for (const r of rows.sort((a, b) => a.id - b.id)) {
    const key = `${r.endpoint_id}:${r.location_key}`;
    let run = runs.get(key);
    if (run === undefined) runs.set(key, (run = []));
    run.push({
      id: r.id,
      lease: r.lease,
      generation: r.generation,
      failures: r.failures,
      retry_since: r.retry_since,
      endpoint_id: r.endpoint_id,
      endpoint_failures: r.endpoint_failures,
      url: r.url,
      secret: r.secret,
      format: r.format,
      language: r.language,
      location_name: r.location_name,
      request: r.request,
      store_number: r.store_number,
      event: {
        uuid: r.uuid,
        type: r.type,
        status: r.status,
        created_at: r.created_at,
        details: r.details,
        location_id: r.location_id,
        internal_id: r.internal_id,
        organization_id: r.organization_id,
        message: r.message,
      },
    });
  }
  return [...runs.values()];
}

/** Is this endpoint within the actor's reach? */
export async function readableEndpoint(q: Queryable, endpointId: number, actor: OrganizationActor): Promise<boolean> {
  const rows = await q.run(sql`SELECT 1 FROM webhook_endpoints w WHERE w.id = ${endpointId} AND ${reachSql(actor, sql.raw('w'))}`);
  return rows.length > 0;
}

export interface AttemptRow {
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface DeliveryRow {
  id: number;
  event_uuid: string;
  type: string;
  status: string;
  state: 'pending' | 'delivered' | 'failed';
  created_at: string;
  next_attempt_at: string | null;
  attempts: AttemptRow[];
}

/** The newest attempts a listing shows per delivery. */
export const ATTEMPTS_SHOWN = 100;

/** A delivery as W1 and W2 show it; `d` is the delivery, `e` its event. */
const DELIVERY_COLUMNS = `d.id, e.uuid::text AS event_uuid, e.type, e.status, d.state, d.created_at,
  -- A pending delivery of an endpoint whose breaker is open waits for its probe time.
  CASE WHEN d.state = 'pending'
    THEN greatest(d.next_attempt_at, (SELECT h.open_until FROM webhook_endpoint_health h WHERE h.endpoint_id = d.endpoint_id))
    ELSE d.next_attempt_at END AS next_attempt_at,
  (SELECT coalesce(json_agg(json_build_object('at', ${wireTime('a.at')}, 'status_code', a.status_code, 'duration_ms', a.duration_ms,
     'error', a.error) ORDER BY a.id), '[]'::json)
   FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.id ORDER BY id DESC LIMIT ${ATTEMPTS_SHOWN}) a) AS attempts`;

/** An endpoint's deliveries, newest first; `before`: only those older than that delivery id. */
export async function listDeliveries(q: Queryable, endpointId: number, limit: number, before: number | null): Promise<DeliveryRow[]> {
  return q.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS}
     FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
     WHERE d.endpoint_id = $1 AND ($2::bigint IS NULL OR d.id < $2)
     ORDER BY d.id DESC LIMIT $3`,
    [endpointId, before, limit],
  );
}

/**
 * W2: the delivery, of an endpoint within the actor's reach, made pending again and due now, with
 * a fresh 24 hours of retries. null: no such delivery. An attempt in flight keeps its lease.
 */
export async function redeliver(q: Tx, deliveryId: number, actor: OrganizationActor, now: Date): Promise<DeliveryRow | null> {
  const [row] = await q.run<DeliveryRow>(
    sql`UPDATE webhook_deliveries d
     SET state = 'pending', next_attempt_at = ${now}, retry_since = ${now}, failures = 0, generation = d.generation + 1, delivered_at = NULL,
       updated_at = ${now}
     FROM webhook_endpoints w, events e
     WHERE d.id = ${deliveryId} AND w.id = d.endpoint_id AND e.id = d.event_id AND ${reachSql(actor, sql.raw('w'))}
     RETURNING ${sql.raw(DELIVERY_COLUMNS)}`,
  );
  // Only a delivery made pending has anything for the deliverer to do.
  if (row !== undefined) q.signal('webhooks');
  return row ?? null;
}
