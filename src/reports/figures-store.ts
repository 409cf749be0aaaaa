// P1's kept figures (migration 036): the one writer of cfh_report_days and cfh_report_counts, and
// the facts of a request that both P1 and the fold read. A request is folded once, by the statement
// that closes it (every closing statement of src/cfh adds foldClosed's CTEs over its RETURNING
// rows); until then P1 reads it from cfh_requests, among the few still open. So P1 costs a range's
// days and months, and the open requests, never every request of the range.
import { cte, sql, type Sql } from '../db/sql.ts';

/** The 2%-wide bucket of a duration (exact below ~50 ms); P1 answers a bucket by its durations' mean. */
// (greatest() skips a NULL: the CASE keeps a step not taken out of the buckets.)
const bucket = (seconds: string) =>
  `CASE WHEN ${seconds} IS NOT NULL THEN floor(ln(1 + greatest(0, extract(epoch FROM ${seconds})) * 1000) / ln(1.02))::int::text END`;
const secondsOf = (seconds: string) => `extract(epoch FROM ${seconds})::float8`;

/**
 * The facts of the requests of `from` (a relation with cfh_requests' columns, as `r`), each a row
 * (location_id, day, kind, key, n, a, b, seconds, name): `day` (n 1, a escalated, b timed out),
 * source, option, device, outcome, employee (a completed, name as claimed) and the three durations
 * (key a bucket, seconds the duration). Days are the location's (`tz`: its time zone).
 */
export const factsOf = (from: string, tz: string): string => `
  SELECT r.location_id, (r.created_at AT TIME ZONE ${tz})::date AS day, f.*
  FROM ${from}
  CROSS JOIN LATERAL (VALUES
    ('day', '', 1, r.is_escalated::int, r.is_timeout::int, 0::float8, NULL::text),
    ('source', r.source, 1, 0, 0, 0, NULL),
    ('option', r.option_id::text, 1, 0, 0, 0, NULL),
    ('device', CASE WHEN r.callbutton_id IS NOT NULL THEN 'call_button:' || r.callbutton_id
      WHEN r.display_id IS NOT NULL THEN 'display:' || r.display_id
      WHEN r.device_id IS NOT NULL THEN 'device:' || r.device_id ELSE 'none' END, 1, 0, 0, 0, NULL),
    ('outcome', CASE WHEN r.is_completed THEN r.completion_reason END, 1, 0, 0, 0, NULL),
    ('employee', CASE WHEN r.claimed_by IS NOT NULL THEN
      CASE WHEN r.claimed_by_user_id ~ '^person:[0-9]{1,9}$' THEN r.claimed_by_user_id ELSE 'name:' || r.claimed_by END END,
      1, r.is_completed::int, 0, 0, r.claimed_by),
    ('claim', ${bucket('r.claimed_at - r.created_at')}, 1, 0, 0, ${secondsOf('r.claimed_at - r.created_at')}, NULL),
    ('on_the_way', ${bucket('r.staff_on_the_way_at - r.created_at')}, 1, 0, 0, ${secondsOf('r.staff_on_the_way_at - r.created_at')}, NULL),
    ('complete', CASE WHEN r.is_completed THEN ${bucket('r.completed_at - r.created_at')} END, 1, 0, 0, ${secondsOf('r.completed_at - r.created_at')}, NULL)
  ) AS f (kind, key, n, a, b, seconds, name)
  WHERE f.key IS NOT NULL`;

/**
 * The CTEs that fold the requests a closing statement returns (its CTE `changed`, RETURNING
 * every column of cfh_requests; those of its rows that are closed) into the figures of its day, month and year. Rows are
 * written in key order, so two closings at one store never wait on each other in opposite orders.
 */
export function foldClosed(changed: string): Sql[] {
  return [
    cte(
      'fold_facts',
      sql.raw(factsOf(`(SELECT * FROM ${changed} WHERE is_closed) r JOIN locations l ON l.id = r.location_id`, "coalesce(l.time_zone, 'UTC')")),
    ),
    cte(
      'fold_days',
      sql.raw(`INSERT INTO cfh_report_days AS d (location_id, day, requests, escalations, timeouts)
        SELECT location_id, day, sum(n), sum(a), sum(b) FROM fold_facts WHERE kind = 'day' GROUP BY location_id, day ORDER BY location_id, day
        ON CONFLICT (location_id, day) DO UPDATE SET requests = d.requests + excluded.requests,
          escalations = d.escalations + excluded.escalations, timeouts = d.timeouts + excluded.timeouts`),
    ),
    cte(
      'fold_counts',
      sql.raw(`INSERT INTO cfh_report_counts AS c (location_id, grain, period, kind, key, n, a, seconds, name)
        SELECT f.location_id, p.grain, p.period, f.kind, f.key, sum(f.n), sum(f.a), sum(f.seconds), min(f.name)
        FROM fold_facts f CROSS JOIN LATERAL (VALUES (0::smallint, f.day), (1::smallint, date_trunc('month', f.day)::date),
          (2::smallint, date_trunc('year', f.day)::date)) AS p (grain, period)
        WHERE f.kind <> 'day'
        GROUP BY f.location_id, p.grain, p.period, f.kind, f.key ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (location_id, grain, period, kind, key) DO UPDATE SET n = c.n + excluded.n, a = c.a + excluded.a,
          seconds = c.seconds + excluded.seconds, name = least(c.name, excluded.name)`),
    ),
  ];
}
