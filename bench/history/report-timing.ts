// Over a filled history (--history N): P1 of one store over 31 days and over a year, timed through
// the service's HTTP API, and the plan of each hot statement, EXPLAIN (ANALYZE, BUFFERS) with the
// parameters a request would give it (writes inside a transaction that is rolled back).
import pg from 'pg';
import { changeHandle, type Queryable, type Tx } from '../../src/db/db.ts';
import * as cfh from '../../src/cfh/store.ts';
import { applyStatusReport } from '../../src/lockers/cabinet-store.ts';
import * as lockers from '../../src/lockers/store.ts';
import * as reports from '../../src/reports/store.ts';
import type { ScenarioInput } from '../scenarios/scenarios.ts';
import type { BenchWorld } from '../harness/world.ts';

export interface HistoryReports {
  /** P1 of one store, median and max of 5 runs after a warm-up, ms. */
  p1: Record<string, { median: number; max: number; targetMs: number }>;
  /** Per hot statement: its plan's lines. */
  plans: Record<string, string[]>;
  /** Per hot statement: the generic plan the service runs it with after its fifth call (auto_explain). */
  genericPlans: Record<string, string[]>;
  /** Per hot statement, prepared and run 30 times in each plan_cache_mode: plans PostgreSQL made, ms per run after the fifth. */
  planCache: Record<string, { auto: { custom: number; generic: number; ms: number }; forceGeneric: { custom: number; generic: number; ms: number } }>;
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

/** Runs fn with a handle that EXPLAINs each of its statements instead of answering it. */
async function explain(client: pg.Client, fn: (q: Tx) => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const q = changeHandle(
    async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
      const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, params as unknown[]);
      lines.push(...res.rows.map((r) => r['QUERY PLAN']));
      return [];
    },
    () => undefined,
  );
  await client.query('BEGIN');
  try {
    await fn(q).catch(() => undefined); // an empty answer may surprise the caller; the plan is taken
  } finally {
    await client.query('ROLLBACK');
  }
  return lines;
}

/** The first statement fn sends, with its parameters. */
async function firstStatement(fn: (q: Tx) => Promise<unknown>): Promise<{ text: string; params: unknown[] } | null> {
  let first: { text: string; params: unknown[] } | null = null;
  const q = changeHandle(
    async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
      first ??= { text, params: [...(params ?? [])] };
      return [];
    },
    () => undefined,
  );
  await fn(q).catch(() => undefined);
  return first;
}

/** Runs the statement prepared, 30 times in a rolled-back transaction (each run undone by a savepoint), in one plan_cache_mode. */
async function planRuns(
  client: pg.Client,
  name: string,
  text: string,
  params: unknown[],
  mode: string,
): Promise<{ custom: number; generic: number; ms: number }> {
  await client.query(`SET plan_cache_mode = ${mode}`);
  await client.query('BEGIN');
  let ms = 0;
  try {
    for (let i = 0; i < 30; i++) {
      await client.query('SAVEPOINT run');
      const started = performance.now();
      await client.query({ name, text, values: params });
      if (i >= 5) ms += performance.now() - started;
      await client.query('ROLLBACK TO SAVEPOINT run');
    }
    const [row] = (
      await client.query<{ custom: string; generic: string }>(
        'SELECT custom_plans AS custom, generic_plans AS generic FROM pg_prepared_statements WHERE name = $1',
        [name],
      )
    ).rows;
    return { custom: Number(row?.custom), generic: Number(row?.generic), ms: Math.round((ms / 25) * 1000) / 1000 };
  } finally {
    await client.query('ROLLBACK');
    await client.query('RESET plan_cache_mode');
  }
}

/** The generic plan of a prepared statement as it runs, from auto_explain (sent to this client as a notice). */
async function genericPlan(client: pg.Client, name: string, text: string, params: unknown[]): Promise<string[]> {
  const notices: string[] = [];
  const onNotice = (n: { message?: string }) => void notices.push(n.message ?? '');
  client.on('notice', onNotice);
  await client.query("LOAD 'auto_explain'");
  await client.query(
    "SET auto_explain.log_level = 'notice'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; SET auto_explain.log_format = 'json'; SET plan_cache_mode = force_generic_plan",
  );
  await client.query('BEGIN');
  try {
    await client.query({ name, text, values: params });
  } finally {
    await client.query('ROLLBACK');
    await client.query('RESET auto_explain.log_min_duration; RESET plan_cache_mode');
    client.removeListener('notice', onNotice);
  }
  const message = notices.find((n) => n.includes('"Plan"')) ?? '';
  const json = JSON.parse(message.slice(message.indexOf('{'))) as { Plan: PlanNode };
  const lines: string[] = [];
  const walk = (node: PlanNode, depth: number) => {
    const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
    const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    lines.push(
      `${'  '.repeat(depth)}${depth > 0 ? '-> ' : ''}${node['Node Type']}${index}${on} (actual rows=${node['Actual Rows']} loops=${node['Actual Loops']}, shared hit=${node['Shared Hit Blocks'] ?? 0} read=${node['Shared Read Blocks'] ?? 0})`,
    );
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  walk(json.Plan, 0);
  return lines;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
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
  const now = new Date();
  const scope = { organizationId: world.organizationId, locationIds: null };
  const staff = { name: 'Bench Staff', userId: 'U0BENCH', channelId: 'C0BENCH', from: 'provider_a' as const };
  const cabinet = input.freeCabinets[0] as ScenarioInput['freeCabinets'][number];
  const messageId = input.messageIds[0] as string;
  const statements: Record<string, (q: Tx) => Promise<unknown>> = {
    'L1 listing': (q) => lockers.locationListingJson(q, location, now),
    'C5 status': (q) => cfh.findStatus(q, scope, messageId),
    'L2 insert order': (q) =>
      lockers.insertOrder(q, { orderId: 1, ...cabinet, organizationId: world.organizationId, rearload: false, openCode: 'explain-1' }, now),
    'L6 complete order': (q) =>
      lockers.completeOpenOrder(q, { openCode: 'history-1' }, { completedBy: null, completedDeviceId: null, coolOffUntil: null }, now),
    'C0 insert request': (q) =>
      cfh.insertRequest(
        q,
        {
          organizationId: world.organizationId,
          locationIds: null,
          locationId: location,
          optionId: world.optionByLocation.get(location) as number,
          messageId: 'explain-1',
          deviceId: null,
          displayId: null,
          callbuttonId: null,
          chatChannelId: null,
          tokenId: null,
          source: 'api',
          customText: null,
          requestFrom: null,
          defaultTimeoutSeconds: 3600,
          defaultEscalationSeconds: 0,
        },
        { created: 'created', completed: 'recorded' },
        now,
      ),
    'L7 status report': (q) =>
      applyStatusReport(
        q,
        {
          lockerId: (world.lockers[0] as BenchWorld['lockers'][number]).id,
          keys: [1],
          front: ['closed'],
          rear: ['closed'],
          ip: '10.0.0.7',
          firmware: '2.4.1',
          eventType: 'active',
          event: { type: 'active' },
        },
        now,
      ),
    'C1 claim': (q) => cfh.claim(q, scope, messageId, staff, null, 'claimed', now),
    'C3 complete': (q) => cfh.complete(q, scope, messageId, staff, 'helped', null, 'completed', now, { checkOutcome: false }),
    'P1 report, 31 days': (q: Queryable) =>
      reports.cfhFigures(q, world.organizationId, location, day(new Date(yesterday.getTime() - 30 * 86_400_000)), day(yesterday)),
  };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const plans: Record<string, string[]> = {};
  const planCache: HistoryReports['planCache'] = {};
  const genericPlans: HistoryReports['genericPlans'] = {};
  try {
    let n = 0;
    for (const [name, fn] of Object.entries(statements)) {
      const first = await firstStatement(fn);
      if (first === null) continue;
      n++;
      planCache[name] = {
        auto: await planRuns(client, `plan_auto_${n}`, first.text, first.params, 'auto'),
        forceGeneric: await planRuns(client, `plan_generic_${n}`, first.text, first.params, 'force_generic_plan'),
      };
      try {
        genericPlans[name] = await genericPlan(client, `plan_seen_${n}`, first.text, first.params);
        const scans = genericPlans[name]
          .filter((l) => /Scan/.test(l))
          .map((l) =>
            l
              .trim()
              .replace(/^->\s*/, '')
              .replace(/\s+\(actual rows=(\d+).*$/, ' ($1 rows)'),
          );
        log(`history: ${name} generic plan: ${[...new Set(scans)].join('; ')}`);
      } catch (err) {
        log(`history: no generic plan of ${name}: ${(err as Error).message}`);
      }
      const p = planCache[name];
      log(
        `history: ${name} prepared: auto made ${p.auto.custom} custom and ${p.auto.generic} generic plans in 30 runs, ${p.auto.ms} ms a run; force_generic_plan ${p.forceGeneric.ms} ms a run`,
      );
    }
    for (const [name, fn] of Object.entries(statements)) {
      plans[name] = await explain(client, fn);
      const scans = plans[name]
        .filter((l) => /Scan/.test(l))
        .map((l) =>
          l
            .trim()
            .replace(/^->\s*/, '')
            .replace(/\s+\(actual.*$/, ''),
        );
      log(`history: ${name}: ${plans[name].find((l) => l.startsWith('Execution Time')) ?? '?'}; ${[...new Set(scans)].join('; ')}`);
    }
  } finally {
    await client.end();
  }
  return { p1, plans, planCache, genericPlans };
}
