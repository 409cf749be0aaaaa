// node bench/reports/long-range.ts [--quick] [--rows N] [--json FILE]   (npm run bench runs it)
// Issue 36, item 1: P1 over ten years of a busy store, and C5 while twenty such reports run. The
// service runs in a child process on the embedded PostgreSQL server (or, with BENCH_DATABASE_URL,
// a throwaway database of that server); the history is written in SQL (generate_series, not the
// API): 500,000 closed requests over ten years at one store, then folded into P1's figures by
// migration 039's own backfill, as an upgrade does. Then:
//   - P1 from 10 years ago to today, one at a time: median and max of several runs (goal < 200 ms);
//   - C5 (unauthenticated tracking reads) alone, then beside 20 clients each asking P1 over ten
//     years again and again with a token of its own, in alternating rounds: every C5 answered (no
//     5xx) and its p99 beside the reports under 5x its p99 alone (medians of the rounds).
import autocannon from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedUrl } from '../../src/db/embedded/server.ts';
import { freshPostgres, vacuum } from '../harness/database.ts';
import { refoldReportFigures } from '../harness/report-figures.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const ROWS = Number(option('rows') ?? 500_000);
const REPORTERS = 20;
const ROUNDS = quick ? 1 : 3;
const SECONDS = quick ? 4 : 8;
const C5_CONNECTIONS = 8;
const P1_RUNS = quick ? 5 : 9;
const GOALS = { p1Ms: 200, c5P99Ratio: 5 } as const;
const root = path.resolve(import.meta.dirname, '../..');
const log = (line: string) => console.log(line);

/** One store's closed requests, one every ~10 minutes of ten years: most claimed, on the way and
 * completed (by 20 employees, with 3 outcomes), a tenth canceled, a tenth timed out. */
const FILL = (locationId: number, optionId: number) => `
  INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, source,
    is_claimed, claimed_at, claimed_by, claimed_by_user_id, claimed_from, is_timeout, timeout_at,
    is_on_the_way, staff_on_the_way_at, is_completed, completed_at, completion_reason,
    is_canceled, customer_canceled_at, is_closed, closed_at, created_at, updated_at)
  SELECT 'long-' || g, 1, ${locationId}, ${optionId}, (ARRAY['api', 'display', 'call_button'])[1 + g % 3],
    outcome = 'done', CASE WHEN outcome = 'done' THEN t + claim END,
    CASE WHEN outcome = 'done' THEN 'Employee ' || (g % 20) END, CASE WHEN outcome = 'done' THEN 'U' || (g % 20) END,
    CASE WHEN outcome = 'done' THEN 'provider_a' END,
    outcome = 'timeout', CASE WHEN outcome = 'timeout' THEN t + interval '5 minutes' END,
    outcome = 'done', CASE WHEN outcome = 'done' THEN t + claim * 2 END,
    outcome IN ('done', 'timeout'), CASE WHEN outcome IN ('done', 'timeout') THEN t + claim * 6 END,
    CASE WHEN outcome IN ('done', 'timeout') THEN (ARRAY['sale', 'no_sale', 'other'])[1 + g % 3] END,
    outcome = 'canceled', CASE WHEN outcome = 'canceled' THEN t + claim END,
    true, t + claim * 6, t, t + claim * 6
  FROM (SELECT g, now() - interval '3650 days' + (g * interval '3650 days' / ${ROWS}) AS t,
          make_interval(secs => 15 + ((g::bigint * 7919) % 180)::int) AS claim,
          CASE WHEN g % 10 = 3 THEN 'canceled' WHEN g % 10 = 7 THEN 'timeout' ELSE 'done' END AS outcome
        FROM generate_series(1, ${ROWS}) AS g) AS x`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.floor((s.length - 1) / 2)] as number);
};
const round1 = (x: number) => Math.round(x * 10) / 10;

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-long-reports-'));
// The embedded server runs as its own user, which must reach DATA_DIR.
fs.chmodSync(dir, 0o755);
const benchUrl = process.env.BENCH_DATABASE_URL;
const external = benchUrl ? await freshPostgres(benchUrl, 'storeops_long_reports') : null;
const world = makeBenchWorld({ locations: 2, lockersPerLocation: 1, cabinetsPerLocker: 4 });
const reportTokens = Array.from({ length: REPORTERS }, () => `bench-reports-${crypto.randomBytes(16).toString('hex')}`);
const file = world.file as { api_tokens: unknown[] };
file.api_tokens.push(...reportTokens.map((token, i) => ({ name: `reports-${i + 1}`, organization_id: world.organizationId, scopes: ['reports'], token })));
const provisionFile = path.join(dir, 'provision.json');
fs.writeFileSync(provisionFile, JSON.stringify(world.file));
const dataDir = path.join(dir, 'data');
const readUrl = external?.url ?? embeddedUrl(dataDir);
const store = world.locations[0] as number;
let server: Server | null = null;
try {
  server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
    DATA_DIR: dataDir,
    SECRET_TOKEN: `bench-secret-${crypto.randomBytes(16).toString('hex')}`,
    PROVISION_FILE: provisionFile,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...(external ? { DATABASE_URL: external.url } : {}),
  });
  const url = server.url;
  log(`[long reports] ${external ? 'PostgreSQL' : 'embedded PostgreSQL'}; writing ${ROWS} closed requests over ten years at store ${store}`);
  let t = performance.now();
  await sql(readUrl, FILL(store, world.optionByLocation.get(store) as number));
  const fillSeconds = round1((performance.now() - t) / 1000);
  // Migration 039's backfill, as the upgrade to it runs it over the history (its figures so far are
  // those of the service's own closings: none yet).
  t = performance.now();
  await sql(readUrl, refoldReportFigures());
  const backfillSeconds = round1((performance.now() - t) / 1000);
  await vacuum(readUrl);
  const counts = (await sql(readUrl, `SELECT (SELECT count(*) FROM cfh_report_days) AS days, (SELECT count(*) FROM cfh_report_counts) AS counts`)).rows[0];
  log(`[long reports] written in ${fillSeconds} s; folded in ${backfillSeconds} s: ${counts.days} day rows, ${counts.counts} count rows`);

  const today = new Date().toISOString().slice(0, 10);
  const tenYearsAgo = new Date(Date.now() - 3_650 * 86_400_000).toISOString().slice(0, 10);
  const p1Path = `/api/reports/cfh?location_id=${store}&from=${tenYearsAgo}&to=${today}`;
  const p1 = async (token: string) => {
    const started = performance.now();
    const res = await fetch(url + p1Path, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    return { status: res.status, ms: performance.now() - started, body };
  };
  const first = await p1(reportTokens[0] as string);
  if (first.status !== 200) throw new Error(`P1 answered ${first.status}: ${first.body.slice(0, 300)}`);
  const total = (JSON.parse(first.body) as { total: number }).total;
  const alone: number[] = [];
  for (let i = 0; i < P1_RUNS; i++) alone.push((await p1(reportTokens[0] as string)).ms);
  const p1Figures = { total, days: 3_650, medianMs: round1(median(alone)), maxMs: round1(Math.max(...alone)), runs: P1_RUNS };
  log(`[long reports] P1 over ten years (${total} requests): median ${p1Figures.medianMs} ms, max ${p1Figures.maxMs} ms of ${P1_RUNS}`);

  const messageIds = Array.from({ length: 200 }, (_, i) => `long-${1 + Math.floor((i * ROWS) / 200)}`);
  const c5 = () =>
    autocannon({
      url,
      duration: SECONDS,
      connections: C5_CONNECTIONS,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => ({
            ...req,
            path: `/api/callforhelp/v1/tracking?message_id=${messageIds[Math.floor(Math.random() * messageIds.length)]}`,
          }),
        },
      ],
    });
  /** 20 clients, each asking P1 over ten years again and again with its own token, until `until`. */
  const reporters = (stop: { done: boolean }) => {
    const statuses: Record<string, number> = {};
    const ms: number[] = [];
    const loops = reportTokens.map(async (token) => {
      while (!stop.done) {
        try {
          const r = await p1(token);
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.status === 200) ms.push(r.ms);
          else if (r.status === 503 || r.status === 429) await new Promise((resolve) => setTimeout(resolve, 100));
        } catch {
          statuses.error = (statuses.error ?? 0) + 1;
        }
      }
    });
    return { statuses, ms, done: Promise.all(loops) };
  };
  const phases: { alone: number[]; beside: number[]; c5Errors: number; c5Non2xx: number; p1Statuses: Record<string, number>; p1Ms: number[] } = {
    alone: [],
    beside: [],
    c5Errors: 0,
    c5Non2xx: 0,
    p1Statuses: {},
    p1Ms: [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['alone', 'beside'] : ['beside', 'alone'];
    for (const phase of order) {
      if (phase === 'alone') {
        const r = await c5();
        phases.alone.push(r.latency.p99);
        phases.c5Errors += r.errors + r.timeouts;
        phases.c5Non2xx += r.non2xx;
        log(`[long reports] round ${round + 1}: C5 alone: p99 ${r.latency.p99} ms, ${Math.round(r.requests.average)} req/s, non-2xx ${r.non2xx}`);
      } else {
        const stop = { done: false };
        const load = reporters(stop);
        await new Promise((resolve) => setTimeout(resolve, 300));
        const r = await c5();
        stop.done = true;
        await load.done;
        phases.beside.push(r.latency.p99);
        phases.c5Errors += r.errors + r.timeouts;
        phases.c5Non2xx += r.non2xx;
        for (const [k, v] of Object.entries(load.statuses)) phases.p1Statuses[k] = (phases.p1Statuses[k] ?? 0) + v;
        phases.p1Ms.push(...load.ms);
        log(
          `[long reports] round ${round + 1}: C5 beside ${REPORTERS} ten-year P1s: p99 ${r.latency.p99} ms, ${Math.round(r.requests.average)} req/s, non-2xx ${r.non2xx}; ` +
            `P1 answers ${JSON.stringify(load.statuses)}, 200s median ${round1(median(load.ms))} ms`,
        );
      }
    }
  }
  const p99Alone = median(phases.alone);
  const p99Beside = median(phases.beside);
  const ratio = round1(p99Beside / Math.max(p99Alone, 1));
  const result = {
    rows: ROWS,
    fillSeconds,
    backfillSeconds,
    figureRows: { days: Number(counts.days), counts: Number(counts.counts) },
    p1: p1Figures,
    c5: {
      connections: C5_CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      p99Alone,
      p99BesideReports: p99Beside,
      p99Ratio: ratio,
      errors: phases.c5Errors,
      non2xx: phases.c5Non2xx,
    },
    reportsBeside: { clients: REPORTERS, statuses: phases.p1Statuses, medianMs: round1(median(phases.p1Ms)) },
    goals: GOALS,
    met: p1Figures.medianMs < GOALS.p1Ms && phases.c5Errors === 0 && phases.c5Non2xx === 0 && ratio < GOALS.c5P99Ratio,
  };
  log(`[long reports] C5 p99 alone ${p99Alone} ms, beside the reports ${p99Beside} ms (x${ratio}); goals ${result.met ? 'met' : 'NOT met'}`);
  const out = option('json');
  if (out) fs.writeFileSync(out, JSON.stringify(result, null, 2));
  else console.log(JSON.stringify(result));
  if (!result.met) process.exitCode = 1;
} finally {
  await server?.stop();
  await external?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
