// npm run bench:flags -- [--seconds S] FLAGS_A FLAGS_B  (needs BENCH_DATABASE_URL)
// Two sets of Node flags for the service (added to `npm start`'s), e.g. '' '--optimize-for-size':
// the scenarios of `npm run bench` on PostgreSQL with each, alternately, twice (A, B, A, B), on 64
// connections, with the idle footprint of each start. For a decision about npm start's flags.
import path from 'node:path';
import { benchBackend, type Settings } from './backend.ts';
import { freshPostgres } from '../harness/database.ts';

const baseUrl = process.env.BENCH_DATABASE_URL;
const args = process.argv.slice(2);
const at = args.indexOf('--seconds');
const seconds = at >= 0 ? Number(args[at + 1]) : 8;
const sets = args.filter((_, i) => i !== at && i !== at + 1);
if (!baseUrl || sets.length !== 2) {
  console.error("usage: BENCH_DATABASE_URL=... npm run bench:flags -- [--seconds S] '' '--optimize-for-size'");
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '../..');
for (const flags of [sets[0], sets[1], sets[0], sets[1]] as string[]) {
  const settings: Settings = {
    duration: seconds,
    connections: 64,
    world: { locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 },
    seedOrders: 2000,
    seedRequests: 3000,
    radioPerCaller: 4,
    history: 0,
    ceilings: false,
    nodeFlags: flags.split(/\s+/).filter(Boolean),
  };
  const db = await freshPostgres(baseUrl, 'storeops_bench_flags');
  try {
    const name = flags || '(npm start)';
    const result = await benchBackend(root, settings, name, db.url, 1, () => undefined);
    console.log(`${name}: idle RSS ${result.idle.rssMb} MB (heap ${result.idle.heapTotalMb}), peak ${result.peakRssMb} MB`);
    for (const s of result.scenarios)
      console.log(
        `  ${s.name.padEnd(32)} ${String(s.rps).padStart(6)} req/s  p99 ${String(s.p99).padStart(4)} ms  service ${s.serverCpuMs} ms/req  RSS ${s.rssMb} MB`,
      );
  } finally {
    await db.drop();
  }
}
