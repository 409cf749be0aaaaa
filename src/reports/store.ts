// SQL of the reports. Each report is one statement over one location's rows of the range (index
// cfh_requests_location_created / locker_orders_location_created, migration 010); the location is
// looked up with the caller's organization in the same statement, so another organization's
// location gives no row at all. Day boundaries are the location's time zone's (UTC without one).
import type { Queryable } from '../db/db.ts';
import type { CfhReport, LockerReport } from './schemas.ts';

/** The location (of the organization) and the instants that bound the range of days. */
const LOCATION_BOUNDS = `
  loc AS (SELECT id, coalesce(time_zone, 'UTC') AS tz FROM locations WHERE id = $1 AND organization_id = $2),
  b AS (SELECT id, tz, ($3::date::timestamp AT TIME ZONE tz) AS t0, (($4::date + 1)::timestamp AT TIME ZONE tz) AS t1 FROM loc)`;
/** ...and every day of the range, each once (per_day lists the days without rows too). */
const BOUNDS = `${LOCATION_BOUNDS},
  days AS (SELECT d::date AS day FROM generate_series($3::date::timestamp, $4::date::timestamp, interval '1 day') AS d)`;

/** { median_s, p90_s } of a column of seconds (rounded to the millisecond; null without rows). */
const durations = (seconds: string, from: string, where: string) => `(SELECT json_build_object(
    'median_s', round((percentile_cont(0.5) WITHIN GROUP (ORDER BY s))::numeric, 3),
    'p90_s', round((percentile_cont(0.9) WITHIN GROUP (ORDER BY s))::numeric, 3))
  FROM (SELECT extract(epoch FROM ${seconds})::float8 AS s FROM ${from} WHERE ${where}) AS x)`;

const DEVICE = `CASE WHEN r.callbutton_id IS NOT NULL THEN 'call_button:' || r.callbutton_id
  WHEN r.display_id IS NOT NULL THEN 'display:' || r.display_id
  WHEN r.device_id IS NOT NULL THEN 'device:' || r.device_id ELSE 'none' END`;
/** The name of that device: the call button's or the display's (other devices have none here). */
const DEVICE_NAME = `coalesce((SELECT name FROM call_buttons WHERE id = r.callbutton_id), (SELECT name FROM cfh_displays WHERE id = r.display_id))`;

/** Who claimed: a person by their id (one entry whatever their name was at the time, shown under
 * their current name), anyone else by the name the integration sent. */
const EMPLOYEE = `CASE WHEN r.claimed_by_user_id ~ '^person:[0-9]{1,9}$' THEN r.claimed_by_user_id ELSE 'name:' || r.claimed_by END`;

const groups = (select: string) => `(SELECT coalesce(json_agg(json_build_object('key', g.key, 'name', g.name, 'requests', g.requests)
  ORDER BY g.requests DESC, g.key), '[]') FROM (${select}) AS g)`;

export type CfhFigures = Omit<CfhReport, 'location_id' | 'from' | 'to'>;

/** P1's figures, or null for a location that is not the organization's. */
export async function cfhFigures(q: Queryable, organizationId: number, locationId: number, from: string, to: string): Promise<CfhFigures | null> {
  const [row] = await q.query<{ report: CfhFigures }>(
    `WITH ${BOUNDS},
     r AS (SELECT r.*, (r.created_at AT TIME ZONE b.tz)::date AS day
           FROM b JOIN cfh_requests r ON r.location_id = b.id AND r.created_at >= b.t0 AND r.created_at < b.t1)
     SELECT json_build_object(
       'total', (SELECT count(*) FROM r),
       'per_day', (SELECT json_agg(json_build_object('day', to_char(days.day, 'YYYY-MM-DD'), 'requests', coalesce(c.requests, 0),
                     'escalations', coalesce(c.escalations, 0), 'timeouts', coalesce(c.timeouts, 0)) ORDER BY days.day)
                   FROM days LEFT JOIN (SELECT day, count(*) AS requests, count(*) FILTER (WHERE is_escalated) AS escalations,
                                          count(*) FILTER (WHERE is_timeout) AS timeouts FROM r GROUP BY day) AS c USING (day)),
       'by_source', ${groups(`SELECT r.source AS key, CASE r.source WHEN 'api' THEN 'API' WHEN 'display' THEN 'Display' ELSE 'Call button' END AS name,
                     count(*) AS requests FROM r GROUP BY 1`)},
       'by_option', ${groups(`SELECT r.option_id::text AS key, o.text_en AS name, count(*) AS requests
                     FROM r JOIN cfh_options o ON o.id = r.option_id GROUP BY r.option_id, o.text_en`)},
       'by_device', ${groups(`SELECT ${DEVICE} AS key, min(${DEVICE_NAME}) AS name, count(*) AS requests FROM r GROUP BY 1`)},
       'time_to_claim', ${durations('claimed_at - created_at', 'r', 'claimed_at IS NOT NULL')},
       'time_to_on_the_way', ${durations('staff_on_the_way_at - created_at', 'r', 'staff_on_the_way_at IS NOT NULL')},
       'time_to_complete', ${durations('completed_at - created_at', 'r', 'is_completed')},
       'outcomes', (SELECT coalesce(json_agg(json_build_object('key', key, 'count', n) ORDER BY n DESC, key), '[]')
                    FROM (SELECT completion_reason AS key, count(*) AS n FROM r WHERE is_completed AND completion_reason IS NOT NULL GROUP BY 1) AS x),
       'by_employee', (SELECT coalesce(json_agg(json_strip_nulls(json_build_object('claimed_by', coalesce(p.name, x.claimed_by), 'person_id', p.id,
                          'claimed', x.claimed, 'completed', x.completed)) ORDER BY x.claimed DESC, coalesce(p.name, x.claimed_by)), '[]')
                       FROM (SELECT ${EMPLOYEE} AS key, min(claimed_by) AS claimed_by, count(*) AS claimed, count(*) FILTER (WHERE is_completed) AS completed
                             FROM r WHERE claimed_by IS NOT NULL GROUP BY 1) AS x
                       LEFT JOIN people p ON p.id = CASE WHEN x.key LIKE 'person:%' THEN substr(x.key, 8)::int END AND p.organization_id = $2)
     ) AS report
     FROM b`,
    [locationId, organizationId, from, to],
  );
  return row?.report ?? null;
}

export type LockerFigures = Omit<LockerReport, 'location_id' | 'from' | 'to'>;

/**
 * P3's figures, or null for a location that is not the organization's. An order counts on the day
 * it was created, with what became of it (an order's status: canceled, else completed, else
 * expired). A cabinet is occupied from its order's creation until the order is completed or
 * canceled (an expired order still holds its cabinet until staff empty it).
 */
export async function lockerFigures(
  q: Queryable,
  organizationId: number,
  locationId: number,
  from: string,
  to: string,
  now: Date,
): Promise<LockerFigures | null> {
  const [row] = await q.query<{ report: LockerFigures }>(
    `WITH ${BOUNDS},
     o AS (SELECT o.*, (o.created_at AT TIME ZONE b.tz)::date AS day
           FROM b JOIN locker_orders o ON o.location_id = b.id AND o.created_at >= b.t0 AND o.created_at < b.t1),
     span AS (SELECT b.id, b.t0, least(b.t1, $5::timestamptz) AS t1 FROM b),
     held AS (SELECT sum(extract(epoch FROM least(coalesce(o.completed_at, o.canceled_at, span.t1), span.t1) - greatest(o.created_at, span.t0))) AS seconds
              FROM span JOIN locker_orders o ON o.location_id = span.id AND o.created_at < span.t1
              WHERE coalesce(o.completed_at, o.canceled_at, 'infinity') > span.t0),
     cabinets AS (SELECT count(*) AS n FROM cabinets c JOIN lockers l ON l.id = c.locker_id JOIN b ON l.location_id = b.id)
     SELECT json_build_object(
       'per_day', (SELECT json_agg(json_build_object('day', to_char(days.day, 'YYYY-MM-DD'), 'orders', coalesce(c.orders, 0),
                     'completed', coalesce(c.completed, 0), 'expired', coalesce(c.expired, 0), 'canceled', coalesce(c.canceled, 0)) ORDER BY days.day)
                   FROM days LEFT JOIN (SELECT day, count(*) AS orders,
                       count(*) FILTER (WHERE canceled_at IS NULL AND completed_at IS NOT NULL) AS completed,
                       count(*) FILTER (WHERE canceled_at IS NULL AND completed_at IS NULL AND expired_at IS NOT NULL) AS expired,
                       count(*) FILTER (WHERE canceled_at IS NOT NULL) AS canceled
                     FROM o GROUP BY day) AS c USING (day)),
       'time_to_ready', ${durations('ready_at - created_at', 'o', 'ready_at IS NOT NULL')},
       'time_to_pickup', ${durations('completed_at - created_at', 'o', 'completed_at IS NOT NULL AND canceled_at IS NULL')},
       'occupancy', (SELECT CASE WHEN cabinets.n = 0 OR span.t1 <= span.t0 THEN NULL
                       ELSE round((coalesce(held.seconds, 0) / (cabinets.n * extract(epoch FROM span.t1 - span.t0)))::numeric, 4) END
                     FROM span, held, cabinets)
     ) AS report
     FROM b`,
    [locationId, organizationId, from, to, now],
  );
  return row?.report ?? null;
}

/** The instants that bound a range of days at a location of the organization; null: not its location. */
export async function rangeBounds(
  q: Queryable,
  organizationId: number,
  locationId: number,
  from: string,
  to: string,
): Promise<{ t0: string; t1: string } | null> {
  const [row] = await q.query<{ t0: string; t1: string }>(`WITH ${LOCATION_BOUNDS} SELECT t0, t1 FROM b`, [locationId, organizationId, from, to]);
  return row ?? null;
}

/** A request as P2 writes it: its record's columns, its option's text and its durations. */
export interface ExportRow {
  id: number;
  message_id: string;
  organization_id: number;
  location_id: number;
  option_id: number;
  option_text: string;
  source: string;
  device_id: number | null;
  display_id: number | null;
  callbutton_id: number | null;
  chat_channel_id: string | null;
  is_claimed: boolean;
  claimed_at: string | null;
  claimed_by: string | null;
  claimed_by_user_id: string | null;
  claimed_from: string | null;
  is_on_the_way: boolean;
  staff_on_the_way_at: string | null;
  is_completed: boolean;
  completed_at: string | null;
  completion_reason: string | null;
  is_canceled: boolean;
  customer_canceled_at: string | null;
  is_timeout: boolean;
  timeout_at: string | null;
  is_closed: boolean;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  seconds_to_claim: number | null;
  seconds_to_on_the_way: number | null;
  seconds_to_complete: number | null;
}

const secondsOf = (column: string) => `round(extract(epoch FROM r.${column} - r.created_at), 3)::float8`;

/**
 * One page of P2, in (created_at, id) order after the keyset `after` (null: from the start). The
 * keyset is always a row comparison (from -infinity on the first page), never `IS NULL OR`: that
 * way it is an index condition and each page starts where the last ended, instead of reading the
 * range again from its start (a year of a busy store took 1.2 s instead of the time of its rows).
 */
export async function exportPage(
  q: Queryable,
  locationId: number,
  bounds: { t0: string; t1: string },
  after: { createdAt: string; id: number } | null,
  limit: number,
): Promise<ExportRow[]> {
  return q.query<ExportRow>(
    `SELECT r.id, r.message_id, r.organization_id, r.location_id, r.option_id, o.text_en AS option_text,
       r.source, r.device_id, r.display_id, r.callbutton_id, r.chat_channel_id,
       r.is_claimed, r.claimed_at, r.claimed_by, r.claimed_by_user_id, r.claimed_from, r.is_on_the_way, r.staff_on_the_way_at,
       r.is_completed, r.completed_at, r.completion_reason, r.is_canceled, r.customer_canceled_at, r.is_timeout, r.timeout_at,
       r.is_closed, r.closed_at, r.created_at, r.updated_at,
       ${secondsOf('claimed_at')} AS seconds_to_claim, ${secondsOf('staff_on_the_way_at')} AS seconds_to_on_the_way,
       ${secondsOf('completed_at')} AS seconds_to_complete
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     WHERE r.location_id = $1 AND r.created_at >= $2 AND r.created_at < $3
       AND (r.created_at, r.id) > ($4::timestamptz, $5::bigint)
     ORDER BY r.created_at, r.id
     LIMIT $6`,
    [locationId, bounds.t0, bounds.t1, after?.createdAt ?? '-infinity', after?.id ?? 0, limit],
  );
}
