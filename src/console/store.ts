// The console's reads that no feature answers in the shape a page needs: what staff read on a
// request beside its record (option, button, customer text) and the location's outcomes, its lockers with each cabinet's open order, its radio edge devices and
// webhook endpoints, the location of a cabinet or an order before a staff action on it, and a store's
// name for a store device's sign-in page.
import type { PersonActor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';

export interface RequestLabel {
  id: number;
  option_text: string;
  option_prompt: string;
  /** The call button's or display's name, when the request came from one. */
  device_name: string | null;
  custom_text: string | null;
  option_text_fr: string;
  option_prompt_fr: string;
  /** `person:<id>` of a person's claim (the staff app's "My requests"). */
  claimed_by_user_id: string | null;
  /** Section 19: it must be scanned before a person completes it; when it was. */
  require_scan: boolean;
  employee_arrived_at: string | null;
}

/** What staff read on a request beside its record (C7 gives the record): its option's text and
 * prompt (en, fr), the button or display it came from, the customer's own text, who claimed it,
 * and whether it must be scanned (and was). */
export async function requestLabels(q: Queryable, locationId: number, ids: readonly number[]): Promise<RequestLabel[]> {
  if (ids.length === 0) return [];
  return q.query<RequestLabel>(
    `SELECT r.id, o.text_en AS option_text, o.prompt_en AS option_prompt, o.text_fr AS option_text_fr, o.prompt_fr AS option_prompt_fr,
       coalesce(b.name, d.name) AS device_name, r.custom_text, r.claimed_by_user_id,
       (o.require_scan OR coalesce(b.require_scan, false) OR coalesce(d.require_scan, false)) AS require_scan, r.employee_arrived_at
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     LEFT JOIN call_buttons b ON b.id = r.callbutton_id AND b.location_id = r.location_id
     LEFT JOIN cfh_displays d ON d.id = r.display_id AND d.location_id = r.location_id
     WHERE r.location_id = $1 AND r.id = ANY ($2::bigint[])`,
    [locationId, [...ids]],
  );
}

export interface OutcomeRow {
  key: string;
  text: string;
  text_fr: string;
}

/** The location's outcomes (contract section 10): when it has some, completing must name one. */
export async function outcomesOf(q: Queryable, locationId: number): Promise<OutcomeRow[]> {
  return q.query<OutcomeRow>('SELECT key, text_en AS text, text_fr FROM cfh_outcomes WHERE location_id = $1 ORDER BY id', [locationId]);
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
    'SELECT l.organization_id, l.location_id FROM cabinets c JOIN lockers l ON l.id = c.locker_id WHERE c.id = $1',
    [cabinetId],
  );
  return row;
}

/** The organization and location of an order (its `id`), or undefined. */
export async function orderPlace(q: Queryable, id: number): Promise<{ organization_id: number; location_id: number } | undefined> {
  const [row] = await q.query<{ organization_id: number; location_id: number }>('SELECT organization_id, location_id FROM locker_orders WHERE id = $1', [id]);
  return row;
}

export interface EdgeRow {
  edge_id: string;
  name: string;
  keeps_transcripts: boolean;
}

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

/** The webhook endpoints within the session's reach that receive the location's events: its own,
 * and the organization-wide ones (which a session limited to some locations does not reach). */
export async function endpointsOf(q: Queryable, session: PersonActor, locationId: number): Promise<EndpointRow[]> {
  return q.run<EndpointRow>(
    sql`SELECT e.id, e.url, e.events, e.location_id,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending')::int AS pending,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered')::int AS delivered,
       (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed')::int AS failed
     FROM webhook_endpoints e
     WHERE (e.location_id = ${locationId} OR e.location_id IS NULL) AND ${reachSql(session, sql.raw('e'))}
     ORDER BY e.id`,
  );
}

/** A location's name, or undefined when there is no such location. */
export async function locationName(q: Queryable, locationId: number): Promise<string | undefined> {
  const [row] = await q.query<{ name: string }>('SELECT name FROM locations WHERE id = $1', [locationId]);
  return row?.name;
}
