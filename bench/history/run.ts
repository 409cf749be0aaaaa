// --history N: the scenarios over a chain's history, compared with the same scenarios over an empty
// history, fairly on a shared machine. A second service runs on a second database (made beside the
// first, seeded the same way, then filled with N orders and N CFH requests of history); each
// scenario then runs in rounds alternating between the two services (empty then history, then
// history then empty, ...), so that whatever else the machine does weighs on both alike. The
// ratio is of the medians of the rounds; the CPU each request cost (the service's, and its own
// database's backends') is the figure that load elsewhere does not move. Both databases are
// vacuumed before each scenario, as autovacuum would have (bench/harness/database.ts).
import type { Options, Result } from 'autocannon';
import type { Settings } from '../scenarios/backend.ts';
import { measureCpu, type CpuMs } from '../harness/cpu.ts';
import { freshPostgres, vacuum } from '../harness/database.ts';
import { fillHistory } from './fill.ts';
import { historyReports, type HistoryReports } from './report-timing.ts';
import { scenarios, type ScenarioInput } from '../scenarios/scenarios.ts';
import { benchSession } from '../harness/people.ts';
import { seed } from '../harness/seed.ts';
import type { Server } from '../harness/server.ts';
import type { BenchWorld } from '../harness/world.ts';

export interface HistoryScenario {
  name: string;
  /** Medians of the rounds over the history. */
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serverCpuMs: number;
  databaseCpuMs: number;
  /** The same over the empty history, measured in the same rounds. */
  empty: { rps: number; p99: number; serverCpuMs: number; databaseCpuMs: number };
  /** Median req/s over the history / median over the empty history. */
  ratioToEmpty: number;
  /** Each round's ratio, in order. */
  roundRatios: number[];
  /** Service and database CPU per request over the history / over the empty history. */
  cpuRatioToEmpty: number;
}

export interface HistoryResult {
  rows: number;
  rounds: number;
  fillSeconds: Record<string, number>;
  scenarios: HistoryScenario[];
  reports: HistoryReports;
}

export interface HistoryContext {
  settings: Settings;
  rounds: number;
  world: BenchWorld;
  secret: string;
  /** The empty-history service, its database and its seeded input. */
  empty: { server: Server; databaseUrl: string; input: ScenarioInput };
  /** Starts another service like the empty one's, on this database. */
  startService: (databaseUrl: string) => Promise<Server>;
  load: (url: string, opts: Partial<Options>) => Promise<Result>;
  log: (line: string) => void;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;

interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpu: CpuMs;
}

export async function historyRun(ctx: HistoryContext): Promise<HistoryResult> {
  const { settings, world, secret, empty, log } = ctx;
  const db = await freshPostgres(empty.databaseUrl, 'storeops_bench_history');
  let server: Server | null = null;
  try {
    server = await ctx.startService(db.url);
    const seeded = await seed(server.url, world, secret, settings.seedOrders, settings.seedRequests);
    const session = await benchSession(server.url, db.url, world);
    const input: ScenarioInput = { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session };
    const fillSeconds = await fillHistory(db.url, settings.history, world, log);
    const sides = { empty: { server: empty.server, databaseUrl: empty.databaseUrl, input: empty.input }, history: { server, databaseUrl: db.url, input } };
    const once = async (side: keyof typeof sides, scenario: (typeof scenarios)[number]): Promise<Round> => {
      const s = sides[side];
      const { loaded, cpu } = await measureCpu(s.server.pid, s.databaseUrl, () => ctx.load(s.input.url, scenario.options(s.input)));
      return { rps: loaded.requests.average, p50: loaded.latency.p50, p99: loaded.latency.p99, errors: loaded.errors + loaded.timeouts + loaded.non2xx, cpu };
    };
    const results: HistoryScenario[] = [];
    for (const scenario of scenarios) {
      await Promise.all([vacuum(empty.databaseUrl), vacuum(db.url)]);
      const rounds: { empty: Round; history: Round }[] = [];
      for (let i = 0; i < ctx.rounds; i++) {
        // Alternate which side goes first, so a trend in the machine's load favours neither.
        const first = i % 2 === 0 ? 'empty' : 'history';
        const a = await once(first, scenario);
        const b = await once(first === 'empty' ? 'history' : 'empty', scenario);
        rounds.push(first === 'empty' ? { empty: a, history: b } : { empty: b, history: a });
      }
      const pick = (side: 'empty' | 'history', f: (r: Round) => number) => round3(median(rounds.map((r) => f(r[side]))));
      const cpuOf = (r: Round) => r.cpu.server + r.cpu.database;
      const result: HistoryScenario = {
        name: scenario.name,
        rps: Math.round(pick('history', (r) => r.rps)),
        p50: pick('history', (r) => r.p50),
        p99: pick('history', (r) => r.p99),
        errors: rounds.reduce((n, r) => n + r.history.errors + r.empty.errors, 0),
        serverCpuMs: pick('history', (r) => r.cpu.server),
        databaseCpuMs: pick('history', (r) => r.cpu.database),
        empty: {
          rps: Math.round(pick('empty', (r) => r.rps)),
          p99: pick('empty', (r) => r.p99),
          serverCpuMs: pick('empty', (r) => r.cpu.server),
          databaseCpuMs: pick('empty', (r) => r.cpu.database),
        },
        ratioToEmpty: round3(pick('history', (r) => r.rps) / pick('empty', (r) => r.rps)),
        roundRatios: rounds.map((r) => round3(r.history.rps / r.empty.rps)),
        cpuRatioToEmpty: round3(pick('history', cpuOf) / pick('empty', cpuOf)),
      };
      log(
        `[history ${settings.history}] ${result.name}: ${result.rps} req/s against ${result.empty.rps} empty (${Math.round(result.ratioToEmpty * 100)}%; rounds ${result.roundRatios.join(', ')}), ` +
          `p99 ${result.p99} ms (empty ${result.empty.p99}), CPU ms/request service ${result.serverCpuMs} (empty ${result.empty.serverCpuMs}), database ${result.databaseCpuMs} (empty ${result.empty.databaseCpuMs})`,
      );
      results.push(result);
    }
    const reports = await historyReports(db.url, server.url, world, input, log);
    return { rows: settings.history, rounds: ctx.rounds, fillSeconds, scenarios: results, reports };
  } finally {
    await server?.stop();
    await db.drop();
  }
}
