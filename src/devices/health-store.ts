// The SQL of device health (contract section 14): last-seen times written in batches, online and
// offline decided by conditional writes (so each transition is one event across instances), and
// D1's listing. Every kind of device is a row of device_presence; the registry below says where a
// kind's devices live (a new kind, such as call buttons, adds one arm).
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsReturningFrom } from '../events/log.ts';
import { insertKeyedJobsFrom } from '../jobs/queue.ts';

export const OFFLINE_SWEEP_JOB = 'devices.offline_sweep';
/** The sweep reschedules itself under the other slot's key: a running job's own key is still pending. */
export const sweepKey = (slot: 0 | 1) => `devices:offline-sweep:${slot}`;

export interface SeenDevice {
  kind: 'locker' | 'edge' | 'call_button';
  deviceId: string;
  seenAt: Date;
}

/** Each known device of the batch `b` (kind, device_id, seen_at), with its organization, location and name. */
const KNOWN = `
  SELECT b.kind, b.device_id, b.seen_at, l.organization_id, l.location_id, l.name
  FROM b JOIN lockers l ON b.kind = 'locker' AND l.id = CASE WHEN b.device_id ~ '^[0-9]{1,10}$' THEN CASE WHEN b.device_id::bigint <= 2147483647 THEN b.device_id::int END END
  UNION ALL
  SELECT b.kind, b.device_id, b.seen_at, e.organization_id, e.location_id, e.name
  FROM b JOIN radio_edges e ON b.kind = 'edge' AND e.edge_id = b.device_id
  UNION ALL
  SELECT b.kind, b.device_id, b.seen_at, c.organization_id, c.location_id, c.name
  FROM b JOIN call_buttons c ON b.kind = 'call_button' AND c.id = CASE WHEN b.device_id ~ '^[0-9]{1,10}$' THEN CASE WHEN b.device_id::bigint <= 2147483647 THEN b.device_id::int END END`;

/** A device event (`online` / `offline`) over rows with kind, device_id, organization_id, location_id. */
const deviceEvent = (status: 'online' | 'offline', rows: string, now: string) => `
  SELECT 'device', '${status}', r.organization_id, r.location_id, r.device_id,
    jsonb_build_object('kind', r.kind, 'id', CASE WHEN r.kind IN ('locker', 'call_button') THEN to_jsonb(r.device_id::int) ELSE to_jsonb(r.device_id) END, 'voltage', NULL),
    format('%s %s is ${status}.', CASE r.kind WHEN 'locker' THEN 'Locker' WHEN 'call_button' THEN 'Call button' ELSE 'Edge device' END, r.device_id), ${now}
  FROM ${rows} r`;

/**
 * One statement for a batch of sightings: each device's last_seen_at moves forward and it is
 * online; a device that was not writes `online`. The sweep's job is asked for (if none is
 * pending) for when the earliest of them could go offline. Returns how many events it wrote.
 */
export async function recordSightings(q: Tx, seen: readonly SeenDevice[], offlineSeconds: number, now: Date): Promise<number> {
  const [row] = await q.query<{ events: number }>(
    `WITH b AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS x(kind, device_id, seen_at)
     ), known AS (${KNOWN}
     ), up AS (
       INSERT INTO device_presence AS p (kind, device_id, organization_id, location_id, last_seen_at, online, flipped)
       -- In key order: two instances writing overlapping batches lock rows in the same order.
       SELECT kind, device_id, organization_id, location_id, seen_at, true, true FROM known ORDER BY kind, device_id
       ON CONFLICT (kind, device_id) DO UPDATE SET
         last_seen_at = greatest(p.last_seen_at, EXCLUDED.last_seen_at),
         organization_id = EXCLUDED.organization_id, location_id = EXCLUDED.location_id,
         flipped = NOT p.online, online = true
       RETURNING p.kind, p.device_id, p.organization_id, p.location_id, p.last_seen_at, p.flipped
     ), sweep AS (
       ${insertKeyedJobsFrom(`SELECT '${OFFLINE_SWEEP_JOB}', jsonb_build_object('slot', 0),
         min(up.last_seen_at) + $4::int * interval '1 second', '${sweepKey(0)}' FROM up HAVING count(*) > 0`)}
     ), ev AS (${insertEventsReturningFrom(deviceEvent('online', '(SELECT * FROM up WHERE flipped)', '$5::timestamptz'))})
     SELECT count(*)::int AS events FROM ev`,
    [seen.map((s) => s.kind), seen.map((s) => s.deviceId), seen.map((s) => s.seenAt), offlineSeconds, now],
  );
  const events = row?.events ?? 0;
  if (events > 0) q.signal('events');
  return events;
}

/**
 * The sweep: every online device not seen within offlineSeconds goes offline (`offline`, once:
 * the update is conditional, and a sighting that commits first makes it skip the device), and the
 * next sweep is asked for when the next of the others could go offline.
 */
export async function sweepOffline(q: Tx, offlineSeconds: number, nextSlot: 0 | 1, now: Date): Promise<number> {
  const [row] = await q.query<{ events: number }>(
    `WITH off AS (
       UPDATE device_presence p SET online = false, flipped = true
       WHERE p.online AND p.last_seen_at <= $1::timestamptz - $2::int * interval '1 second'
       RETURNING p.kind, p.device_id, p.organization_id, p.location_id
     ), next AS (
       ${insertKeyedJobsFrom(`SELECT '${OFFLINE_SWEEP_JOB}', jsonb_build_object('slot', $3::int), min(p.last_seen_at) + $2::int * interval '1 second',
         'devices:offline-sweep:' || $3::int FROM device_presence p
         WHERE p.online AND p.last_seen_at > $1::timestamptz - $2::int * interval '1 second' HAVING count(*) > 0`)}
     ), ev AS (${insertEventsReturningFrom(deviceEvent('offline', 'off', '$1::timestamptz'))})
     SELECT count(*)::int AS events FROM ev`,
    [now, offlineSeconds, nextSlot],
  );
  const events = row?.events ?? 0;
  if (events > 0) q.signal('events');
  return events;
}

export interface DeviceRow {
  kind: 'locker' | 'edge' | 'call_button';
  id: number | string;
  name: string;
  online: boolean;
  last_seen_at: string | null;
  voltage: number | null;
  firmware: string | null;
  ip: string | null;
  queued_messages: number;
}

/** The organization of a location, or undefined when there is none. */
export async function locationOrganization(q: Queryable, locationId: number): Promise<number | undefined> {
  const [row] = await q.query<{ organization_id: number }>('SELECT organization_id FROM locations WHERE id = $1', [locationId]);
  return row?.organization_id;
}

/** D1: a location's devices, lockers then edge devices, each by id. */
export async function devicesOfLocation(q: Queryable, locationId: number, offlineSeconds: number, now: Date): Promise<DeviceRow[]> {
  return q.query<DeviceRow>(
    `WITH d AS (
       SELECT 'locker' AS kind, l.id::text AS device_id, to_jsonb(l.id) AS id, l.name, l.firmware, l.ip, l.last_seen_at AS reported_at,
         'lockers/' || l.id || '/commands' AS inbox, 0 AS rank, lpad(l.id::text, 10, '0') AS sort
       FROM lockers l WHERE l.location_id = $1
       UNION ALL
       SELECT 'edge', e.edge_id, to_jsonb(e.edge_id), e.name, NULL, NULL, NULL, 'radio/' || e.edge_id || '/play', 1, e.edge_id
       FROM radio_edges e WHERE e.location_id = $1
       UNION ALL
       -- Call buttons talk HTTP only (B1): no inbox, nothing queued.
       SELECT 'call_button', c.id::text, to_jsonb(c.id), c.name, NULL, NULL, NULL, NULL, 2, lpad(c.id::text, 10, '0')
       FROM call_buttons c WHERE c.location_id = $1
     )
     SELECT d.kind, d.id, d.name, seen.at AS last_seen_at,
       coalesce(seen.at > $3::timestamptz - $2::int * interval '1 second', false) AS online,
       (SELECT c.voltage FROM call_buttons c WHERE d.kind = 'call_button' AND c.id::text = d.device_id) AS voltage, d.firmware, d.ip,
       -- Sent and not acked, as redelivery counts them: older than a later acked message is superseded.
       -- Radio plays given up (expired, dropped) or past expiry are no longer queued, and are not superseded (devices/store.ts).
       (SELECT count(*) FROM device_outbox o WHERE o.topic = d.inbox AND o.published_at IS NOT NULL AND o.acked_at IS NULL
          AND o.discarded_at IS NULL AND (o.expires_at IS NULL OR o.expires_at > $3::timestamptz)
          AND (o.expires_at IS NOT NULL OR o.id > coalesce((SELECT max(a.id) FROM device_outbox a WHERE a.topic = d.inbox AND a.acked_at IS NOT NULL), 0)))::int AS queued_messages
     FROM d LEFT JOIN device_presence p ON p.kind = d.kind AND p.device_id = d.device_id
       CROSS JOIN LATERAL (SELECT nullif(greatest(coalesce(p.last_seen_at, '-infinity'), coalesce(d.reported_at, '-infinity')), '-infinity') AS at) seen
     ORDER BY d.rank, d.sort`,
    [locationId, offlineSeconds, now],
  );
}
