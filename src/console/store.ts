// The console's reads that no feature answers in the shape a page needs: the locations a session
// may see, the queue of a location's requests, its lockers with each cabinet's open order, its
// radio edge devices and webhook endpoints, and the location of a cabinet or an order before a
// staff action on it. Columns that newer migrations add (a request's escalation, an option's
// staff action) are read through to_jsonb, so these reads work before and after them.
import type { Queryable } from '../db/db.ts';

export interface LocationRow { id: number; name: string }

/** The organization's locations, within `limit` when the token has one. */
export async function visibleLocations(q: Queryable, organizationId: number, limit: readonly number[] | null): Promise<LocationRow[]> {
  return q.query<LocationRow>(
    `SELECT id, name FROM locations WHERE organization_id = $1 AND ($2::int[] IS NULL OR id = ANY ($2::int[])) ORDER BY name, id`,
    [organizationId, limit === null ? null : [...limit]],
  );
}

export interface QueueRow {
  id: number;
  message_id: string;
  status: string;
  is_escalated: boolean;
  source: string;
  option_text: string;
  option_prompt: string;
  staff_action: string;
  claimed_by: string | null;
  claimed_at: string | null;
  staff_on_the_way_at: string | null;
  completed_at: string | null;
  completion_reason: string | null;
  created_at: string;
  closed_at: string | null;
}

/** A location's open requests and those closed in the last `closedHours`, newest first. */
export async function queue(q: Queryable, locationId: number, now: Date, closedHours: number): Promise<QueueRow[]> {
  return q.query<QueueRow>(
    `SELECT r.id, r.message_id,
       CASE WHEN r.is_canceled THEN 'cancelled' WHEN r.is_completed THEN 'completed' WHEN r.is_timeout THEN 'timed_out'
            WHEN r.is_on_the_way THEN 'on_the_way' WHEN r.is_claimed THEN 'claimed'
            WHEN coalesce((to_jsonb(r) ->> 'is_escalated')::boolean, false) THEN 'escalated' ELSE 'created' END AS status,
       coalesce((to_jsonb(r) ->> 'is_escalated')::boolean, false) AS is_escalated,
       CASE WHEN r.callbutton_id IS NOT NULL THEN 'call_button' WHEN r.display_id IS NOT NULL THEN 'display' ELSE 'api' END AS source,
       o.text_en AS option_text, o.prompt_en AS option_prompt,
       coalesce(to_jsonb(o) ->> 'staff_action', 'claim_and_on_the_way') AS staff_action,
       r.claimed_by, r.claimed_at AS claimed_at, r.staff_on_the_way_at AS staff_on_the_way_at,
       r.completed_at AS completed_at, r.completion_reason,
       r.created_at AS created_at, r.closed_at AS closed_at
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     WHERE r.location_id = $1 AND (NOT r.is_closed OR NOT r.is_timeout AND r.closed_at > $2::timestamptz - $3 * interval '1 hour'
                                   OR r.is_timeout AND r.timeout_at > $2::timestamptz - $3 * interval '1 hour')
     ORDER BY r.is_closed, r.created_at DESC, r.id DESC
     LIMIT 200`,
    [locationId, now, closedHours],
  );
}

/** The location of a request of the organization, or undefined. */
export async function requestLocation(q: Queryable, organizationId: number, messageId: string): Promise<number | undefined> {
  const [row] = await q.query<{ location_id: number }>('SELECT location_id FROM cfh_requests WHERE message_id = $1 AND organization_id = $2', [messageId, organizationId]);
  return row?.location_id;
}

export interface LockerCabinetRow {
  locker_id: number;
  locker_name: string;
  rear_loading_available: boolean;
  cabinet_id: number;
  key: number;
  name: string | null;
  state: string;
  rear_load_status: string;
  enabled: boolean;
  occupied: boolean;
  size: string;
  thermal_mode: string;
  cool_off_until: string | null;
  cool_off: boolean;
  order_id: number | null;
  order_ref: number | null;
  order_created_at: string | null;
  pickup_deadline: string | null;
  order_ready: boolean | null;
  order_expired: boolean | null;
}

/** Every cabinet of the location's lockers, with its open order (not completed nor canceled). */
export async function lockerCabinets(q: Queryable, locationId: number, now: Date): Promise<LockerCabinetRow[]> {
  return q.query<LockerCabinetRow>(
    `SELECT l.id AS locker_id, l.name AS locker_name, l.rear_loading_available,
       c.id AS cabinet_id, c.key, c.name, c.state, c.rear_load_status, c.enabled, c.occupied, c.size, c.thermal_mode,
       c.cool_off_until AS cool_off_until, coalesce(c.cool_off_until > $2::timestamptz, false) AS cool_off,
       o.id AS order_id, o.order_id AS order_ref, o.created_at AS order_created_at,
       o.pickup_deadline AS pickup_deadline,
       o.ready_at IS NOT NULL AS order_ready, o.expired_at IS NOT NULL AS order_expired
     FROM lockers l JOIN cabinets c ON c.locker_id = l.id
     LEFT JOIN locker_orders o ON o.cabinet_id = c.id AND o.completed_at IS NULL AND o.canceled_at IS NULL
     WHERE l.location_id = $1
     ORDER BY l.name, l.id, c.key`,
    [locationId, now],
  );
}

/** The organization and location of a cabinet, or undefined. */
export async function cabinetPlace(q: Queryable, cabinetId: number): Promise<{ organization_id: number; location_id: number } | undefined> {
  const [row] = await q.query<{ organization_id: number; location_id: number }>(
    'SELECT l.organization_id, l.location_id FROM cabinets c JOIN lockers l ON l.id = c.locker_id WHERE c.id = $1', [cabinetId],
  );
  return row;
}

/** The organization and location of an order (its `id`), or undefined. */
export async function orderPlace(q: Queryable, id: number): Promise<{ organization_id: number; location_id: number } | undefined> {
  const [row] = await q.query<{ organization_id: number; location_id: number }>('SELECT organization_id, location_id FROM locker_orders WHERE id = $1', [id]);
  return row;
}

export interface EdgeRow { edge_id: string; name: string; keeps_transcripts: boolean }

export async function edgesOf(q: Queryable, locationId: number): Promise<EdgeRow[]> {
  return q.query<EdgeRow>(
    `SELECT edge_id, name, 'transcript' = ANY (voice_handlers) AS keeps_transcripts FROM radio_edges WHERE location_id = $1 ORDER BY name, edge_id`,
    [locationId],
  );
}

export interface EndpointRow {
  id: number;
  url: string;
  events: string[];
  location_id: number | null;
  pending: number;
  delivered: number;
  failed: number;
}

/** The webhook endpoints that receive the location's events: its own, and, for a reader limited to
 * no locations, the organization-wide ones (webhooks/rules.ts: a limited reader sees only its own). */
export async function endpointsOf(q: Queryable, organizationId: number, locationId: number, limited: boolean): Promise<EndpointRow[]> {
  return q.query<EndpointRow>(
    `SELECT e.id, e.url, e.events, e.location_id,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending')::int AS pending,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered')::int AS delivered,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed')::int AS failed
     FROM webhook_endpoints e
     WHERE e.organization_id = $1 AND (e.location_id = $2 OR (e.location_id IS NULL AND NOT $3::boolean))
     ORDER BY e.id`,
    [organizationId, locationId, limited],
  );
}
