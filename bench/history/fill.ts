// --history N: the database of a chain that has run for two years. N picked-up locker orders (each
// with the customer's agree) and N completed CFH requests (created, claimed, completed steps),
// filled in SQL with generate_series, not through the API, spread over the bench world's stores
// and the last 730 days; the event log holds the events of the last 85 days (older ones are gone
// by retention, 90 days by default), as a running service's would. Then VACUUM ANALYZE, as
// autovacuum would have done (it is off on the benchmark machine).
import pg from 'pg';
import { refoldReportFigures } from '../harness/report-figures.ts';
import type { BenchWorld } from '../harness/world.ts';

const DAYS = 730;
const EVENT_DAYS = 85;

function fills(n: number, world: BenchWorld): [string, string][] {
  const first = world.locations[0] as number;
  const count = world.locations.length;
  const lockersPer = world.lockers.filter((k) => k.locationId === first).length;
  const cabinetsPer = world.lockers[0]?.cabinets.length ?? 1;
  // g's store, locker and cabinet ids, as bench/harness/world.ts numbers them; t its time.
  const base = `SELECT g, ${first} + g % ${count} AS loc, 1 + (g / ${count}) % ${lockersPer} AS k, 1 + (g / ${count * lockersPer}) % ${cabinetsPer} AS c,
      now() - interval '${DAYS} days' + (g * interval '${DAYS} days' / ${n}) AS t,
      make_interval(secs => 15 + ((g::bigint * 7919) % 180)::int) AS claim
    FROM generate_series(1, ${n}) AS g`;
  const recent = `now() - interval '${EVENT_DAYS} days'`;
  return [
    [
      'orders',
      `INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload,
        created_at, updated_at, completed_at, pickup_deadline, ready_at)
      SELECT 900000000 + g, (loc * 100 + k) * 100 + c, loc * 100 + k, ${world.organizationId}, loc, 'history-' || g, false,
        t, t + claim * 40, t + claim * 40, t + interval '72 hours', t + interval '15 minutes'
      FROM (${base}) AS x`,
    ],
    [
      'order events',
      `INSERT INTO locker_order_events (locker_order_id, kind, created_at)
      SELECT id, 'agree', completed_at - interval '5 seconds' FROM locker_orders WHERE open_code LIKE 'history-%'`,
    ],
    [
      'requests',
      `INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, chat_channel_id,
        is_claimed, claimed_at, claimed_by, claimed_by_user_id, claimed_from, is_completed, completed_at, completion_reason,
        is_closed, closed_at, created_at, updated_at)
      SELECT 'history-' || g, ${world.organizationId}, loc, 4000 + loc, 'C' || loc,
        true, t + claim, 'Employee ' || (g % 20), 'U' || (g % 20), 'provider_a', true, t + claim * 6, (ARRAY['sale', 'no_sale', 'other'])[1 + g % 3],
        true, t + claim * 6, t, t + claim * 6
      FROM (${base}) AS x`,
    ],
    [
      'request events',
      `INSERT INTO cfh_request_events (request_id, kind, at, actor_name, actor_user_id, channel_id, request_from, detail)
      SELECT r.id, s.kind, s.at, CASE WHEN s.kind <> 'created' THEN r.claimed_by END, CASE WHEN s.kind <> 'created' THEN r.claimed_by_user_id END,
        r.chat_channel_id, CASE WHEN s.kind <> 'created' THEN 'provider_a' END, CASE WHEN s.kind = 'completed' THEN 'helped' END
      FROM cfh_requests r CROSS JOIN LATERAL (VALUES ('created', r.created_at), ('claimed', r.claimed_at), ('completed', r.completed_at)) AS s (kind, at)
      WHERE r.message_id LIKE 'history-%'`,
    ],
    [
      'events',
      `INSERT INTO events (type, status, organization_id, location_id, internal_id, details, created_at)
      SELECT 'locker', 'order_completed', organization_id, location_id, id::text, jsonb_build_object('order_id', order_id), completed_at
        FROM locker_orders WHERE open_code LIKE 'history-%' AND created_at > ${recent}
      UNION ALL
      SELECT 'callforhelp', 'completed', organization_id, location_id, id::text, jsonb_build_object('message_id', message_id), completed_at
        FROM cfh_requests WHERE message_id LIKE 'history-%' AND created_at > ${recent}`,
    ],
  ];
}

/** Fills the history; returns the seconds each part took. */
export async function fillHistory(databaseUrl: string, n: number, world: BenchWorld, log: (line: string) => void): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const took: Record<string, number> = {};
  try {
    for (const [what, sql] of fills(n, world)) {
      const started = performance.now();
      const res = await client.query(sql);
      took[what] = Math.round((performance.now() - started) / 100) / 10;
      log(`history: ${res.rowCount} ${what} in ${took[what]} s`);
    }
    // The subscribers' cursors pass the filled events, as they would have read them as they came.
    await client.query(`UPDATE event_cursors SET tx_id = m.tx_id, event_id = m.id FROM (SELECT tx_id, id FROM events ORDER BY tx_id DESC, id DESC LIMIT 1) AS m
      WHERE (event_cursors.tx_id, event_cursors.event_id) < (m.tx_id, m.id)`);
    const started = performance.now();
    await client.query(refoldReportFigures());
    await client.query('VACUUM ANALYZE');
    took.vacuum = Math.round((performance.now() - started) / 100) / 10;
    log(`history: VACUUM ANALYZE in ${took.vacuum} s`);
  } finally {
    await client.end();
  }
  return took;
}
