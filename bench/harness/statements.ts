// The bench's own copies of statements the service runs on its hot reads, written against the
// schema rather than imported from the service's stores, so that refactoring the service's SQL
// does not break the bench. The database ceiling (scenarios/ceilings.ts) times L1's and C5's, and
// the history and the reports benchmarks EXPLAIN them. When the service's statement for L1 or C5
// changes materially, change the copy here too, or those figures are of the old statement.

const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** L1: a location's lockers with their cabinets, as the JSON body the service answers. */
export const L1_LISTING = `SELECT (
  SELECT '[' || coalesce(string_agg(row_to_json(lk)::text, ',' ORDER BY lk.id), '') || ']'
  FROM (
    SELECT l.id, l.api_key, ${wireTime('l.created_at')} AS created_at, ${wireTime('l.updated_at')} AS updated_at,
      l.name, l.organization_id, l.location_id, l.rear_loading_available, l.version, l.timer,
      (SELECT ('[' || coalesce(string_agg(row_to_json(cb)::text, ',' ORDER BY cb.key), '') || ']')::json
       FROM (
         SELECT c.id, c.key, ${wireTime('c.created_at')} AS created_at, ${wireTime('c.updated_at')} AS updated_at,
           c.name, c.locker_id, c.state, c.enabled, c.size, c.occupied::int AS occupied,
           ${wireTime('c.released_at')} AS released_at, c.thermal_mode, c.rear_load_status, c.tag,
           coalesce(c.cool_off_until > $2::timestamptz, false) AS cool_off_period
         FROM cabinets c WHERE c.locker_id = l.id
       ) cb) AS cabinets
    FROM lockers l WHERE l.location_id = loc.id
  ) lk
)::text AS body
FROM locations loc WHERE loc.id = $1`;

/** C5: one request's status by its message id, within the caller's organization and locations. */
export const C5_STATUS = `SELECT r.id AS request_id, r.device_id, r.location_id, r.organization_id, r.message_id, r.option_id, r.is_claimed, r.claimed_at, r.claimed_by,
  r.created_at, r.updated_at, r.is_timeout, r.timeout_at, r.is_closed, r.closed_at, r.is_on_the_way, r.staff_on_the_way_at,
  r.is_completed, r.is_canceled, r.customer_canceled_at, r.source, r.is_escalated, r.escalated_at, r.chat_channel_id, r.custom_text,
  o.text_en AS option_text_en, o.text_fr AS option_text_fr, o.prompt_en AS option_prompt_en, o.prompt_fr AS option_prompt_fr,
  o.organization_id AS option_organization_id, o.location_id AS option_location_id,
  o.created_at AS option_created_at, o.updated_at AS option_updated_at,
  coalesce(l.staff_name_format, 'full') AS staff_name_format, coalesce(l.language, 'en') AS language,
  l.name AS store_name
FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id JOIN locations l ON l.id = r.location_id
WHERE r.message_id = $1 AND ($2::int IS NULL OR r.organization_id = $2) AND ($3::int[] IS NULL OR r.location_id = ANY ($3::int[]))`;

/** One location's rows of `table` in [from, to], days in the location's time zone: what a report reads. */
export const rangeRows = (table: string) =>
  `SELECT count(*) AS n FROM ${table} o JOIN locations l ON l.id = o.location_id
   WHERE o.location_id = $1 AND o.created_at >= ($2::date::timestamp AT TIME ZONE l.time_zone) AND o.created_at < (($3::date + 1)::timestamp AT TIME ZONE l.time_zone)`;
