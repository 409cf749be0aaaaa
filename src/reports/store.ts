// SQL of the reports. P1 is one statement over one location's kept figures (migration 036) and its
// open requests; P3 over the location's orders of the range (locker_orders_location_created,
// migration 010); P2 pages through the range's requests (cfh_requests_location_created). The location is
// looked up with the caller's organization in the same statement, so another organization's
// location gives no row at all. Day boundaries are the location's time zone's (UTC without one).
import type { Queryable } from '../db/db.ts';
import { factsOf } from './figures-store.ts';
import type { DayRange, Span } from './rules.ts';
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

const groups = (select: string) => `(SELECT coalesce(json_agg(json_build_object('key', g.key, 'name', g.name, 'requests', g.requests)
  ORDER BY g.requests DESC, g.key), '[]') FROM (${select}) AS g)`;

/** The id in a key `<prefix><id>`, else NULL (CASE first, so no other key is cast). */
const idIn = (key: string, prefix: string) => `(CASE WHEN ${key} LIKE '${prefix}%' THEN substr(${key}, ${prefix.length + 1}) END)::int`;

/** The name of a device key's call button or display (other devices have none here). */
const DEVICE_NAME = `coalesce((SELECT name FROM call_buttons WHERE id = ${idIn('f.key', 'call_button:')} AND location_id = b.id),
  (SELECT name FROM cfh_displays WHERE id = ${idIn('f.key', 'display:')} AND location_id = b.id))`;

/** P1's figures: what the JSON report holds, the durations still as their buckets. */
export type CfhFigures = Omit<CfhReport, 'location_id' | 'from' | 'to' | 'per_day' | 'time_to_claim' | 'time_to_on_the_way' | 'time_to_complete'> & {
  /** The days with requests (days after `from`), each with its figures (as many, in that order): per_day is made of them. */
  days: { at: number[]; requests: number[]; escalations: number[]; timeouts: number[] };
  durations: { kind: 'claim' | 'on_the_way' | 'complete'; n: number; seconds: number }[] | null;
};

/**
 * P1's figures, or null for a location that is not the organization's: the kept counts of the
 * range's spans (its whole years, then whole months, then days), and the facts of its requests still open (a few: open
 * requests time out), summed by kind and key; per_day from the kept days (a row each).
 */
export async function cfhFigures(
  q: Queryable,
  organizationId: number,
  locationId: number,
  range: DayRange,
  spans: readonly Span[],
): Promise<CfhFigures | null> {
  const [row] = await q.query<{ report: CfhFigures }>(
    `WITH ${BOUNDS},
     open AS (SELECT r.* FROM b JOIN cfh_requests r ON r.location_id = b.id AND NOT r.is_closed AND r.created_at >= b.t0 AND r.created_at < b.t1),
     open_facts AS (${factsOf('open r CROSS JOIN b', 'b.tz')}),
     spans AS (SELECT * FROM unnest($5::smallint[], $6::date[], $7::date[]) AS s (grain, lo, hi)),
     kept AS (SELECT c.kind, c.key, c.n, c.a, c.seconds, c.name FROM b CROSS JOIN spans s
       JOIN cfh_report_counts c ON c.location_id = b.id AND c.grain = s.grain AND c.period >= s.lo AND c.period < s.hi),
     f AS (SELECT kind, key, sum(n) AS n, sum(a) AS a, sum(seconds) AS seconds, min(name) AS name
           FROM (SELECT kind, key, n, a, seconds, name FROM kept UNION ALL SELECT kind, key, n, a, seconds, name FROM open_facts WHERE kind <> 'day') AS x
           GROUP BY kind, key),
     open_days AS (SELECT day, sum(n) AS requests, sum(a) AS escalations, sum(b) AS timeouts FROM open_facts WHERE kind = 'day' GROUP BY day),
     kept_days AS (SELECT k.day, k.requests, k.escalations, k.timeouts FROM b JOIN cfh_report_days k ON k.location_id = b.id AND k.day BETWEEN $3::date AND $4::date),
     d AS (SELECT coalesce(k.day, o.day) AS day, coalesce(k.requests, 0) + coalesce(o.requests, 0) AS requests,
             coalesce(k.escalations, 0) + coalesce(o.escalations, 0) AS escalations, coalesce(k.timeouts, 0) + coalesce(o.timeouts, 0) AS timeouts
           FROM kept_days k FULL JOIN open_days o ON o.day = k.day ORDER BY 1)
     SELECT json_build_object(
       'total', (SELECT coalesce(sum(requests), 0) FROM d),
       'days', (SELECT json_build_object('at', coalesce(array_agg(d.day - $3::date), '{}'), 'requests', coalesce(array_agg(d.requests), '{}'),
                  'escalations', coalesce(array_agg(d.escalations), '{}'), 'timeouts', coalesce(array_agg(d.timeouts), '{}')) FROM d),
       'by_source', ${groups(`SELECT key, CASE key WHEN 'api' THEN 'API' WHEN 'display' THEN 'Display' ELSE 'Call button' END AS name, n AS requests
                     FROM f WHERE kind = 'source'`)},
       'by_option', ${groups(`SELECT f.key, o.text_en AS name, f.n AS requests FROM f JOIN cfh_options o ON o.id = (CASE WHEN f.kind = 'option' THEN f.key END)::int WHERE f.kind = 'option'`)},
       'by_device', ${groups(`SELECT f.key, ${DEVICE_NAME} AS name, f.n AS requests FROM f WHERE f.kind = 'device'`)},
       'durations', (SELECT json_agg(json_build_object('kind', kind, 'n', n, 'seconds', seconds)) FROM f WHERE kind IN ('claim', 'on_the_way', 'complete')),
       'outcomes', (SELECT coalesce(json_agg(json_build_object('key', key, 'count', n) ORDER BY n DESC, key), '[]') FROM f WHERE kind = 'outcome'),
       'by_employee', (SELECT coalesce(json_agg(json_strip_nulls(json_build_object('claimed_by', coalesce(p.name, x.name), 'person_id', p.id,
                          'claimed', x.n, 'completed', x.a)) ORDER BY x.n DESC, coalesce(p.name, x.name)), '[]')
                       FROM (SELECT key, name, n, a FROM f WHERE kind = 'employee') AS x
                       LEFT JOIN people p ON p.id = ${idIn('x.key', 'person:')} AND p.organization_id = $2)
     ) AS report
     FROM b`,
    [locationId, organizationId, range.from, range.to, spans.map((s) => s.grain), spans.map((s) => s.from), spans.map((s) => s.until)],
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
