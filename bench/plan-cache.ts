// npm run bench:plan-cache [-- --seconds S]  (needs BENCH_DATABASE_URL)
// plan_cache_mode for the service's prepared statements: the scenarios of `npm run bench` on a
// throwaway database with PostgreSQL's default (auto: custom plans for a statement's first five
// runs, then the generic plan unless it costs more) and again with force_generic_plan set on the
// database, one after the other, on 64 connections. Prints requests per second and PostgreSQL's
// CPU per request of each.
import path from 'node:path';
import pg from 'pg';
import { benchBackend, type ScenarioResult, type Settings } from './backend.ts';
import { freshPostgres } from './database.ts';

const baseUrl = process.env.BENCH_DATABASE_URL;
if (!baseUrl) {
  console.error('bench:plan-cache needs BENCH_DATABASE_URL');
  process.exit(2);
}
const i = process.argv.indexOf('--seconds');
const seconds = i >= 0 ? Number(process.argv[i + 1]) : 8;
const root = path.resolve(import.meta.dirname, '..');
const settings: Settings = {
  duration: seconds, connections: 64, world: { locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 },
  seedOrders: 2000, seedRequests: 3000, radioPerCaller: 4, history: 0, ceilings: false,
};
const quiet = () => undefined;

const runs: Record<string, ScenarioResult[]> = {};
for (const mode of ['auto', 'force_generic_plan', 'auto ', 'force_generic_plan ']) {
  const db = await freshPostgres(baseUrl, 'storeops_bench_plan');
  try {
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} SET plan_cache_mode = ${mode.trim()}`);
    await admin.end();
    const result = await benchBackend(root, settings, mode, db.url, 1, quiet);
    runs[mode] = result.scenarios;
    for (const s of result.scenarios) console.log(`${mode.trim().padEnd(19)} ${s.name.padEnd(32)} ${String(s.rps).padStart(6)} req/s  p99 ${String(s.p99).padStart(4)} ms  database ${s.databaseCpuMs} ms/req  service ${s.serverCpuMs} ms/req`);
  } finally {
    await db.drop();
  }
}
