// The database's figures of a scrape, in one statement: grouped counts and a few index lookups.
import type { Queryable } from '../db/db.ts';

export interface Snapshot {
  cfh: Record<string, number>;
  deviceMessages: { queued: number; failed: number; unacked: number };
  webhooks: Record<string, number>;
  jobsLagSeconds: number;
  devicesOnline: Record<string, number>;
}

/** A request's status from its flags (closing states first, then the furthest step taken). */
/** (The same order as cfh/rules.ts statusOf.) */
const CFH_STATUS = `CASE WHEN is_canceled THEN 'cancelled' WHEN is_completed THEN 'completed' WHEN is_timeout AND is_closed THEN 'timed_out'
  WHEN is_on_the_way THEN 'on_the_way' WHEN is_claimed THEN 'claimed' WHEN is_escalated THEN 'escalated' ELSE 'created' END`;

export async function snapshot(q: Queryable, now: Date): Promise<Snapshot> {
  const [row] = await q.query<{ s: Snapshot }>(
    `SELECT json_build_object(
       'cfh', (SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT ${CFH_STATUS} AS status, count(*) AS n FROM cfh_requests GROUP BY 1) AS x),
       'deviceMessages', (SELECT json_build_object(
           'queued', count(*) FILTER (WHERE published_at IS NULL),
           'failed', count(*) FILTER (WHERE published_at IS NULL AND last_error IS NOT NULL),
           'unacked', count(*) FILTER (WHERE published_at IS NOT NULL))
         FROM device_outbox WHERE acked_at IS NULL AND discarded_at IS NULL), -- radio plays given up are no longer queued
       'webhooks', (SELECT coalesce(json_object_agg(state, n), '{}') FROM (SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY 1) AS x),
       'jobsLagSeconds', (SELECT coalesce(greatest(extract(epoch FROM $1::timestamptz - min(run_at)), 0), 0)::float8 FROM jobs WHERE done_at IS NULL AND run_at <= $1),
       'devicesOnline', (SELECT coalesce(json_object_agg(kind, n), '{}') FROM (SELECT kind, count(*) AS n FROM device_presence WHERE online GROUP BY 1) AS x)
     ) AS s`,
    [now],
  );
  return (row as { s: Snapshot }).s;
}
