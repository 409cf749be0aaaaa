// The database ceiling of a read scenario: its own statements, timed alone, through the service's
// own database handle (src/db/db.ts: node-postgres, a pool of 10, prepared statements), with as
// many calls in flight as the scenario has connections. What PostgreSQL can answer without HTTP,
// Fastify or the service's code around the statement.
import { openDb, type Queryable } from '../../src/db/db.ts';
import { findStatus } from '../../src/cfh/store.ts';
import { locationListingJson } from '../../src/lockers/store.ts';
import type { ScenarioInput } from './scenarios.ts';

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;

/** Per read scenario: the statements one of its requests runs (C5's token is remembered for a second, so one statement). */
const statements: Record<string, (q: Queryable, input: ScenarioInput) => Promise<unknown>> = {
  'L1 read': (q, { world }) => locationListingJson(q, pick(world.locations), new Date()),
  'C5 read': (q, { world, messageIds }) => findStatus(q, { organizationId: world.organizationId, locationIds: null }, pick(messageIds)),
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
  const db = await openDb({ url: databaseUrl });
  try {
    for (let i = 0; i < 20; i++) await run(db, input); // prepare on the connections, warm the cache
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < end) {
          const started = performance.now();
          await run(db, input);
          latencies.push(performance.now() - started);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    return { rps: Math.round(latencies.length / seconds), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  } finally {
    await db.close();
  }
}
