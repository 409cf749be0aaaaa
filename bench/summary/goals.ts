// Issue 29's goals for the embedded PostgreSQL server, judged on one run of `npm run bench` with
// BENCH_DATABASE_URL: each scenario within 15% of the same scenario on the machine's PostgreSQL,
// the idle service and its embedded server under 220 MB of PSS, a first start under 8 s and a
// later one under 3 s.
import type { BackendResult } from '../scenarios/backend.ts';
import { ISSUE_29_SCENARIOS } from '../scenarios/scenarios.ts';

export const GOALS = { gapPercent: 15, idlePssMb: 220, firstStartMs: 8_000, laterStartMs: 3_000 } as const;

export interface Side {
  rps: number;
  p99: number;
  /** CPU ms per request, the service's and its database backends'. */
  serviceCpuMs: number;
  databaseCpuMs: number;
}

export interface ScenarioComparison {
  name: string;
  embedded: Side;
  postgres: Side;
  /** Embedded req/s against PostgreSQL's, in percent: -20 is 20% fewer requests a second. */
  rpsGapPercent: number;
  /** Embedded p99 against PostgreSQL's, in percent: +20 is a p99 20% longer. */
  p99GapPercent: number;
  /** Embedded CPU per request (service + database) against PostgreSQL's, in percent. */
  cpuGapPercent: number;
  /** req/s no more than 15% below PostgreSQL's (above it is met too). */
  met: boolean;
}

export interface Verdict {
  value: number;
  goal: number;
  met: boolean;
}

export interface Comparison {
  scenarios: ScenarioComparison[];
  idlePssMb: Verdict | null;
  firstStartMs: Verdict | null;
  laterStartMs: Verdict | null;
}

const gap = (a: number, b: number) => (b > 0 ? Math.round((a / b - 1) * 1000) / 10 : 0);
const side = (s: BackendResult['scenarios'][number]): Side => ({ rps: s.rps, p99: s.p99, serviceCpuMs: s.serverCpuMs, databaseCpuMs: s.databaseCpuMs });
const under = (value: number, goal: number): Verdict => ({ value, goal, met: value < goal });

/** The embedded backend against the external one (null: no comparison of scenarios). */
export function compare(embedded: BackendResult, postgres: BackendResult | null): Comparison {
  const scenarios: ScenarioComparison[] = [];
  for (const e of embedded.scenarios.filter((s) => ISSUE_29_SCENARIOS.includes(s.name))) {
    const p = postgres?.scenarios.find((s) => s.name === e.name);
    if (!p) continue;
    const rpsGapPercent = gap(e.rps, p.rps);
    scenarios.push({
      name: e.name,
      embedded: side(e),
      postgres: side(p),
      rpsGapPercent,
      p99GapPercent: gap(e.p99, p.p99),
      cpuGapPercent: gap(e.serverCpuMs + e.databaseCpuMs, p.serverCpuMs + p.databaseCpuMs),
      met: rpsGapPercent >= -GOALS.gapPercent,
    });
  }
  return {
    scenarios,
    idlePssMb: under(embedded.idle.totalPssMb, GOALS.idlePssMb),
    firstStartMs: embedded.start ? under(embedded.start.firstMs, GOALS.firstStartMs) : null,
    laterStartMs: embedded.start ? under(embedded.start.laterMs, GOALS.laterStartMs) : null,
  };
}
