-- storeops: stop earlier releases first
-- P1's figures kept per location and day (issue 36, item 1): a report reads a range's days and
-- months instead of every request of the range. A request is folded in once, by the statement that
-- closes it (src/reports/figures-store.ts, the one writer of both tables); P1 reads requests still
-- open from cfh_requests (cfh_requests_location_open). Days are the location's days (its time_zone
-- when the request closed). Earlier releases close requests without folding them: they stop first.

-- A day's requests by the day they were created: P1's per_day and total.
CREATE TABLE cfh_report_days (
  location_id integer NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
  day date NOT NULL,
  requests bigint NOT NULL,
  escalations bigint NOT NULL,
  timeouts bigint NOT NULL,
  PRIMARY KEY (location_id, day)
);

-- Counts by kind and key, per day (grain 0), month (1) and year (2), period the first day of it:
-- kind source, option, device, outcome, employee (n claimed, a completed, name the least name it
-- claimed under) and the durations claim, on_the_way and complete: key a bucket (2% wide), n the
-- durations in it, seconds their sum (P1 answers each bucket by its mean). A range reads its whole
-- years, the whole months around them and the days around those; the key holds every column, so
-- that is an index-only scan.
CREATE TABLE cfh_report_counts (
  location_id integer NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
  grain smallint NOT NULL CHECK (grain IN (0, 1, 2)),
  period date NOT NULL,
  kind text NOT NULL,
  key text NOT NULL,
  n bigint NOT NULL,
  a bigint NOT NULL,
  seconds float8 NOT NULL,
  name text,
  PRIMARY KEY (location_id, grain, period, kind, key) INCLUDE (n, a, seconds, name)
);

-- The closed requests so far, folded as figures-store.ts folds one (keep the two in step).
WITH facts AS (
  SELECT r.location_id, (r.created_at AT TIME ZONE coalesce(l.time_zone, 'UTC'))::date AS day, f.*
  FROM cfh_requests r JOIN locations l ON l.id = r.location_id
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
    ('claim', CASE WHEN r.claimed_at IS NOT NULL THEN floor(ln(1 + greatest(0, extract(epoch FROM r.claimed_at - r.created_at)) * 1000) / ln(1.02))::int::text END,
      1, 0, 0, extract(epoch FROM r.claimed_at - r.created_at)::float8, NULL),
    ('on_the_way', CASE WHEN r.staff_on_the_way_at IS NOT NULL THEN floor(ln(1 + greatest(0, extract(epoch FROM r.staff_on_the_way_at - r.created_at)) * 1000) / ln(1.02))::int::text END,
      1, 0, 0, extract(epoch FROM r.staff_on_the_way_at - r.created_at)::float8, NULL),
    ('complete', CASE WHEN r.is_completed THEN CASE WHEN r.completed_at IS NOT NULL THEN floor(ln(1 + greatest(0, extract(epoch FROM r.completed_at - r.created_at)) * 1000) / ln(1.02))::int::text END END,
      1, 0, 0, extract(epoch FROM r.completed_at - r.created_at)::float8, NULL)
  ) AS f (kind, key, n, a, b, seconds, name)
  WHERE r.is_closed AND f.key IS NOT NULL
),
days AS (
  INSERT INTO cfh_report_days (location_id, day, requests, escalations, timeouts)
  SELECT location_id, day, sum(n), sum(a), sum(b) FROM facts WHERE kind = 'day' GROUP BY location_id, day
)
INSERT INTO cfh_report_counts (location_id, grain, period, kind, key, n, a, seconds, name)
SELECT f.location_id, p.grain, p.period, f.kind, f.key, sum(f.n), sum(f.a), sum(f.seconds), min(f.name)
FROM facts f CROSS JOIN LATERAL (VALUES (0::smallint, f.day), (1::smallint, date_trunc('month', f.day)::date), (2::smallint, date_trunc('year', f.day)::date))
  AS p (grain, period)
WHERE f.kind <> 'day'
GROUP BY f.location_id, p.grain, p.period, f.kind, f.key;
