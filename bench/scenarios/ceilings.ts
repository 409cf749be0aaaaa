// The database ceiling of a read scenario: the statement one of its requests runs, timed alone
// through node-postgres (a pool of 10, the statement prepared, the connections set as the service
// sets its own: UTC, generic plans), with as many calls in flight as the scenario has connections.
// What PostgreSQL can answer without HTTP, Fastify or the service's code around the statement.
//
// The statements are the bench's own copies of what the service runs for L1 and C5
// (bench/harness/statements.ts; rows are parsed with node-postgres's own parsers).
import pg from 'pg';
import { C5_STATUS, L1_LISTING } from '../harness/statements.ts';
import type { ScenarioInput } from './scenarios.ts';

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
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
