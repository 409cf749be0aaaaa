// Over a filled history (--history N): P1 of one store over 31 days and over a year, timed through
// the service's HTTP API, and the plans, EXPLAIN (ANALYZE, BUFFERS), of the bench's own copies of
// L1's and C5's statements and of the rows P1 reads (bench/harness/statements.ts). The plans of the
// writes and of the service's own statements, which this once took by running the service's store
// functions against an EXPLAINing handle, and the plan-cache counts (bench/JOURNAL.md,
// "plan_cache_mode") are no longer taken: the bench does not import the service's stores.
import pg from 'pg';
import { C5_STATUS, L1_LISTING, rangeRows } from '../harness/statements.ts';
import type { BenchWorld } from '../harness/world.ts';
import type { ScenarioInput } from '../scenarios/scenarios.ts';

export interface HistoryReports {
  /** P1 of one store, median and max of 5 runs after a warm-up, ms. */
  p1: Record<string, { median: number; max: number; targetMs: number }>;
  /** Per statement of the bench's own (L1 listing, C5 status, P1 rows over 31 days): its plan's lines. */
  plans: Record<string, string[]>;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

async function timeP1(url: string, token: string): Promise<{ median: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < 6; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`P1 ${url}: ${res.status} ${body}`);
    if (i > 0) ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { median: Math.round(ms[Math.floor(ms.length / 2)] as number), max: Math.round(ms.at(-1) as number) };
}

export async function historyReports(
  databaseUrl: string,
  serviceUrl: string,
  world: BenchWorld,
  input: ScenarioInput,
  log: (line: string) => void,
): Promise<HistoryReports> {
  const location = world.locations[0] as number;
  const yesterday = new Date(Date.now() - 86_400_000);
  const ranges = { '31 days': { days: 31, targetMs: 200 }, '365 days': { days: 365, targetMs: 1000 } };
  const p1: HistoryReports['p1'] = {};
  for (const [name, r] of Object.entries(ranges)) {
    const from = day(new Date(yesterday.getTime() - (r.days - 1) * 86_400_000));
    p1[name] = {
      ...(await timeP1(`${serviceUrl}/api/reports/cfh?location_id=${location}&from=${from}&to=${day(yesterday)}`, world.token)),
      targetMs: r.targetMs,
    };
    log(`history: P1 of store ${location} over ${name}: median ${p1[name]?.median} ms, max ${p1[name]?.max} ms (target < ${r.targetMs})`);
  }
  const from31 = day(new Date(yesterday.getTime() - 30 * 86_400_000));
  const statements: Record<string, { text: string; params: unknown[] }> = {
    'L1 listing': { text: L1_LISTING, params: [location, new Date()] },
    'C5 status': { text: C5_STATUS, params: [input.messageIds[0], world.organizationId, null] },
    'P1 rows, 31 days': { text: rangeRows('cfh_requests'), params: [location, from31, day(yesterday)] },
  };
  const plans: HistoryReports['plans'] = {};
  const client = new pg.Client({ connectionString: databaseUrl, options: '-c TimeZone=UTC' });
  await client.connect();
  try {
    for (const [name, { text, params }] of Object.entries(statements)) {
      const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, params);
      plans[name] = res.rows.map((r) => r['QUERY PLAN']);
      const scans = plans[name]
        .filter((l) => /Scan/.test(l))
        .map((l) =>
          l
            .trim()
            .replace(/^->\s*/, '')
            .replace(/\s+\(actual.*$/, ''),
        );
      log(`history: ${name} (the bench's statement): ${plans[name].find((l) => l.startsWith('Execution Time')) ?? '?'}; ${[...new Set(scans)].join('; ')}`);
    }
  } finally {
    await client.end();
  }
  return { p1, plans };
}
