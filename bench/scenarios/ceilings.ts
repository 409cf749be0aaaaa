// The database ceiling of a read scenario: the statement one of its requests runs, timed alone
// through node-postgres (a pool of 10, the statement prepared, the connections set as the service
// sets its own: UTC, generic plans), with as many calls in flight as the scenario has connections.
// What PostgreSQL can answer without HTTP, Fastify or the service's code around the statement.
//
// The statements are the bench's own copies of what the service runs for L1 and C5, written here
// against the schema rather than imported from the service's stores, so that refactoring the
// service's SQL does not break the bench (rows are parsed with node-postgres's own parsers). When
// the service's statement for L1 or C5 changes materially, change the copy here too, or this
// ceiling measures the old statement.
import pg from 'pg';
import type { ScenarioInput } from './scenarios.ts';

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** L1: a location's lockers with their cabinets, as the JSON body the service answers. */
const L1_LISTING = `SELECT (
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
const C5_STATUS = `SELECT r.id AS request_id, r.device_id, r.location_id, r.organization_id, r.message_id, r.option_id, r.is_claimed, r.claimed_at, r.claimed_by,
  r.created_at, r.updated_at, r.is_timeout, r.timeout_at, r.is_closed, r.closed_at, r.is_on_the_way, r.staff_on_the_way_at,
  r.is_completed, r.is_canceled, r.customer_canceled_at, r.source, r.is_escalated, r.escalated_at, r.chat_channel_id, r.custom_text,
  o.text_en AS option_text_en, o.text_fr AS option_text_fr, o.prompt_en AS option_prompt_en, o.prompt_fr AS option_prompt_fr,
  o.organization_id AS option_organization_id, o.location_id AS option_location_id,
  o.created_at AS option_created_at, o.updated_at AS option_updated_at,
  coalesce(l.staff_name_format, 'full') AS staff_name_format, coalesce(l.language, 'en') AS language,
  l.name AS store_name
FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id JOIN locations l ON l.id = r.location_id
WHERE r.message_id = $1 AND ($2::int IS NULL OR r.organization_id = $2) AND ($3::int[] IS NULL OR r.location_id = ANY ($3::int[]))`;

/** Per read scenario: the statement one of its requests runs (C5's token is remembered for a second, so one statement). */
const statements: Record<string, (pool: pg.Pool, input: ScenarioInput) => Promise<unknown>> = {
  'L1 read': (pool, { world }) => pool.query({ name: 'bench_l1', text: L1_LISTING, values: [pick(world.locations), new Date()] }),
  'C5 read': (pool, { world, messageIds }) => pool.query({ name: 'bench_c5', text: C5_STATUS, values: [pick(messageIds), world.organizationId, null] }),
};

export interface DatabaseCeiling {
  rps: number;
  p50: number;
  p99: number;
}

export function hasDatabaseCeiling(scenario: string): boolean {
  return scenario in statements;
}

function percentile(sorted: number[], p: number): number {
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0) * 100) / 100;
}

export async function databaseCeiling(
  databaseUrl: string,
  scenario: string,
  input: ScenarioInput,
  seconds: number,
  inFlight: number,
): Promise<DatabaseCeiling> {
  const run = statements[scenario];
  if (run === undefined) throw new Error(`no database ceiling for ${scenario}`);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, options: '-c TimeZone=UTC -c plan_cache_mode=force_generic_plan' });
  try {
    for (let i = 0; i < 20; i++) await run(pool, input); // prepare on the connections, warm the cache
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < end) {
          const started = performance.now();
          await run(pool, input);
          latencies.push(performance.now() - started);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    return { rps: Math.round(latencies.length / seconds), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  } finally {
    await pool.end();
  }
}
