// npm run bench:reports  (needs BENCH_DATABASE_URL)
// The reports at a chain's scale: a throwaway PostgreSQL database with a million closed CFH
// requests and a million locker orders over 500 locations and two years, filled in SQL
// (generate_series, not the API), then P1, P2 (the whole CSV) and P3 of one location over 31 days
// and over a year, timed through the real HTTP service in a child process. Prints median and max
// of several runs, and the scans of the bench's own statement for the rows P1 and P3 read (one
// location's requests or orders over a year by created_at, in the location's time zone), which
// must go through the location/created_at indexes. That is the bench's SQL, not the service's: the
// bench imports nothing of the service's stores. Targets (issue 18): 31 days under 200 ms, a year
// under a second.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freshPostgres } from '../harness/database.ts';
import { refoldReportFigures } from '../harness/report-figures.ts';
import { rangeRows } from '../harness/statements.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const ROWS = Number(process.env.BENCH_REPORT_ROWS ?? 1_000_000);
const LOCATIONS = 500;
const CABINETS = 8;
const HISTORY_DAYS = 730;
const RUNS = 7;
const TIME_ZONE = 'America/Toronto';
/** A tenth of all rows at one busy store (1001), the rest spread over the other locations. */
const LOCATION_OF = `CASE WHEN g % 10 = 0 THEN 1001 ELSE 1002 + (g % ${LOCATIONS - 1}) END`;
const root = path.resolve(import.meta.dirname, '../..');

const baseUrl = process.env.BENCH_DATABASE_URL;
if (!baseUrl) {
  console.error('bench:reports needs BENCH_DATABASE_URL (a PostgreSQL server where it may create a throwaway database)');
  process.exit(2);
}

/** Closed requests, one every ~63 s of the two years, spread over the locations. Most are claimed,
 * on the way and completed; a tenth are canceled by the customer, a tenth time out. */
const FILL_REQUESTS = `
  INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, chat_channel_id,
    is_claimed, claimed_at, claimed_by, claimed_by_user_id, claimed_from, is_timeout, timeout_at,
    is_on_the_way, staff_on_the_way_at, is_completed, completed_at, completion_reason,
    is_canceled, customer_canceled_at, is_closed, closed_at, created_at, updated_at)
  SELECT 'bench-' || g, 1, loc, 4000 + loc, 'C' || loc,
    outcome = 'done', CASE WHEN outcome = 'done' THEN t + claim END,
    CASE WHEN outcome = 'done' THEN 'Employee ' || (g % 20) END, CASE WHEN outcome = 'done' THEN 'U' || (g % 20) END,
    CASE WHEN outcome = 'done' THEN 'provider_a' END,
    outcome = 'timeout', CASE WHEN outcome = 'timeout' THEN t + interval '5 minutes' END,
    outcome = 'done', CASE WHEN outcome = 'done' THEN t + claim * 2 END,
    outcome IN ('done', 'timeout'), CASE WHEN outcome IN ('done', 'timeout') THEN t + claim * 6 END,
    CASE WHEN outcome IN ('done', 'timeout') THEN (ARRAY['sale', 'no_sale', 'other'])[1 + g % 3] END,
    outcome = 'canceled', CASE WHEN outcome = 'canceled' THEN t + claim END,
    true, t + claim * 6, t, t + claim * 6
  FROM (SELECT g, ${LOCATION_OF} AS loc,
          now() - interval '${HISTORY_DAYS} days' + (g * interval '${HISTORY_DAYS} days' / ${ROWS}) AS t,
          make_interval(secs => 15 + ((g::bigint * 7919) % 180)::int) AS claim,
          CASE WHEN g % 10 = 3 THEN 'canceled' WHEN g % 10 = 7 THEN 'timeout' ELSE 'done' END AS outcome
        FROM generate_series(1, ${ROWS}) AS g) AS x`;

/** Orders the same way: ready after a quarter hour, most picked up, a tenth canceled, a tenth
 * expired (then emptied by staff: canceled, since a cabinet holds one open order at a time). */
const FILL_ORDERS = `
  INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload,
    created_at, updated_at, completed_at, canceled_at, pickup_deadline, ready_at, expired_at)
  SELECT g, (loc * 100 + 1) * 100 + 1 + g % ${CABINETS}, loc * 100 + 1, 1, loc, 'bench-' || g, false,
    t, t + pickup, CASE WHEN outcome = 'done' THEN t + pickup END,
    CASE WHEN outcome = 'canceled' THEN t + interval '10 minutes' WHEN outcome = 'expired' THEN t + interval '73 hours' END,
    t + interval '72 hours', CASE WHEN outcome <> 'canceled' THEN t + interval '15 minutes' + make_interval(secs => g % 600) END,
    CASE WHEN outcome = 'expired' THEN t + interval '72 hours' END
  FROM (SELECT g, ${LOCATION_OF} AS loc,
          now() - interval '${HISTORY_DAYS} days' + (g * interval '${HISTORY_DAYS} days' / ${ROWS}) AS t,
          make_interval(secs => 1800 + ((g::bigint * 7919) % 86400)::int) AS pickup,
          CASE WHEN g % 10 = 3 THEN 'canceled' WHEN g % 10 = 7 THEN 'expired' ELSE 'done' END AS outcome
        FROM generate_series(1, ${ROWS}) AS g) AS x`;

function day(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function stats(ms: number[]): { median: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { median: Math.round((sorted[Math.floor(sorted.length / 2)] as number) * 10) / 10, max: Math.round((sorted.at(-1) as number) * 10) / 10 };
}

async function timed(url: string, token: string): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body}`);
  return { ms: performance.now() - started, body };
}

/** The plan of a statement, as PostgreSQL runs it with these parameters. */
async function plan(client: pg.Client, text: string, params: unknown[]): Promise<string[]> {
  const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params);
  return res.rows.map((r) => r['QUERY PLAN']);
}

async function main(): Promise<void> {
  const database = await freshPostgres(baseUrl as string, 'storeops_bench_reports');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-bench-reports-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  const world = makeBenchWorld({ locations: LOCATIONS, lockersPerLocation: 1, cabinetsPerLocker: CABINETS });
  const file = world.file as { locations: Record<string, unknown>[]; api_tokens: { scopes: string[] }[] };
  for (const location of file.locations) location.time_zone = TIME_ZONE;
  for (const token of file.api_tokens) if (!token.scopes.includes('reports')) token.scopes.push('reports'); // the world's token may have it already
  const provisionFile = path.join(dir, 'world.json');
  fs.writeFileSync(provisionFile, JSON.stringify(world.file));
  let server: Server | null = null;
  const client = new pg.Client({ connectionString: database.url });
  try {
    console.log(`starting the service on ${database.url.replace(/\/\/[^@]*@/, '//')} (${LOCATIONS} locations, time zone ${TIME_ZONE})`);
    server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
      DATA_DIR: path.join(dir, 'data'),
      SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'),
      PROVISION_FILE: provisionFile,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
    });
    await client.connect();
    for (const [what, sql] of [
      ['requests', FILL_REQUESTS],
      ['orders', FILL_ORDERS],
    ] as const) {
      const started = performance.now();
      await client.query(sql);
      console.log(`filled ${ROWS.toLocaleString('en')} ${what} in ${Math.round((performance.now() - started) / 1000)} s`);
    }
    await client.query(refoldReportFigures());
    await client.query('ANALYZE');

    const locations = [
      { name: 'typical', id: world.locations[Math.floor(LOCATIONS / 2)] as number },
      { name: 'busiest', id: world.locations[0] as number },
    ];
    const yesterday = new Date(Date.now() - 86_400_000);
    const ranges = [
      { name: '31 days', from: day(new Date(yesterday.getTime() - 30 * 86_400_000)), to: day(yesterday), target: 200 },
      { name: '365 days', from: day(new Date(yesterday.getTime() - 364 * 86_400_000)), to: day(yesterday), target: 1000 },
    ];
    const reports = [
      { name: 'P1 cfh', path: '/api/reports/cfh' },
      { name: 'P2 requests.csv', path: '/api/reports/cfh/requests.csv' },
      { name: 'P3 lockers', path: '/api/reports/lockers' },
    ];
    const missed: string[] = [];
    console.log(`\n${RUNS} runs each after one warm-up (ms):`);
    for (const [location, range, report] of locations.flatMap((l) => ranges.flatMap((r) => reports.map((p) => [l, r, p] as const)))) {
      const url = `${server.url}${report.path}?location_id=${location.id}&from=${range.from}&to=${range.to}`;
      const { body } = await timed(url, world.token);
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) ms.push((await timed(url, world.token)).ms);
      const s = stats(ms);
      const ok = s.max < range.target;
      const table = report.path.endsWith('lockers') ? 'locker_orders' : 'cfh_requests';
      const rows = (await client.query<{ n: string }>(rangeRows(table), [location.id, range.from, range.to])).rows[0]?.n;
      if (!ok) missed.push(`${report.name} ${location.name} ${range.name}`);
      // Every row of the range, once: the header and one line per request (the CSV's pages join up).
      if (report.path.endsWith('.csv') && body.split('\r\n').length - 2 !== Number(rows))
        missed.push(`${report.name} ${location.name} ${range.name}: not every row`);
      console.log(
        `  ${location.name} ${location.id} ${report.name.padEnd(16)} ${range.name.padEnd(9)} ${String(rows).padStart(6)} rows` +
          `  median ${String(s.median).padStart(6)}  max ${String(s.max).padStart(6)}  (target < ${range.target}) ${ok ? 'ok' : 'MISSED'}`,
      );
    }

    const year = ranges[1] as (typeof ranges)[number];
    const location = world.locations[0] as number;
    const plans = {
      'P1 rows (busiest, 365 days)': await plan(client, rangeRows('cfh_requests'), [location, year.from, year.to]),
      'P3 rows (busiest, 365 days)': await plan(client, rangeRows('locker_orders'), [location, year.from, year.to]),
    };
    for (const [name, lines] of Object.entries(plans)) {
      const scans = lines.filter((l) => /Scan/.test(l)).map((l) => l.trim().replace(/\s+\(cost.*$/, ''));
      console.log(`\n${name}: ${lines.find((l) => l.startsWith('Execution Time')) ?? ''}; scans:`);
      for (const scan of scans) console.log(`  ${scan}`);
      const seq = scans.filter((l) => /Seq Scan on (cfh_requests|locker_orders)/.test(l));
      if (seq.length > 0 || !scans.some((l) => /_location_created/.test(l))) missed.push(`${name} does not read through the location/created_at index`);
    }
    if (missed.length > 0) {
      console.error(`\nMISSED: ${missed.join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log('\nevery target met');
    }
  } finally {
    await client.end().catch(() => undefined);
    await server?.stop();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
