// npm run soak [-- --minutes N] [-- --rate R]
// Mixed load at a steady rate for a while (10 minutes by default) against one service process,
// on PostgreSQL when BENCH_DATABASE_URL is set (else the embedded PostgreSQL server). Samples the server's
// RSS and open file descriptors every 10 s; fails on any error or on memory that keeps growing.
import autocannon, { type Options, type Result } from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPostgres } from '../harness/database.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { benchSession } from '../harness/people.ts';
import { scenarios, type ScenarioInput } from '../scenarios/scenarios.ts';
import { seed } from '../harness/seed.ts';
import { serviceNodeFlags, startServer } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const minutes = arg('--minutes', 10);
const rate = arg('--rate', 200); // requests per second per scenario
const root = path.resolve(import.meta.dirname, '../..');

function sample(pid: number): { rssMb: number; fds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(rss / 1024), fds: fs.readdirSync(`/proc/${pid}/fd`).length };
}

const benchUrl = process.env.BENCH_DATABASE_URL;
const fresh = benchUrl ? await freshPostgres(benchUrl, 'storeops_soak') : null;
const databaseUrl = fresh?.url ?? null;

const world = makeBenchWorld({ locations: 20, lockersPerLocation: 4, cabinetsPerLocker: 24 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-soak-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
fs.writeFileSync(path.join(dir, 'world.json'), JSON.stringify(world.file));
const secret = crypto.randomBytes(18).toString('base64url');
const server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
  DATA_DIR: path.join(dir, 'data'),
  SECRET_TOKEN: secret,
  PROVISION_FILE: path.join(dir, 'world.json'),
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const samples: { t: number; rssMb: number; fds: number }[] = [];
let failed = false;
try {
  const seeded = await seed(server.url, world, secret, 500, 500);
  const session = await benchSession(server.url, databaseUrl ?? embeddedUrl(path.join(dir, 'data')), world);
  const input: ScenarioInput = { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session };
  console.log(`soak: ${minutes} min, ${scenarios.length} scenarios at ${rate} req/s each, ${databaseUrl ? 'PostgreSQL' : 'embedded PostgreSQL'}`);
  const started = Date.now();
  const timer = setInterval(() => {
    const s = { t: Math.round((Date.now() - started) / 1000), ...sample(server.pid) };
    samples.push(s);
    console.log(`t=${s.t}s rss=${s.rssMb} MB fds=${s.fds}`);
  }, 10_000);
  const results: Result[] = await Promise.all(
    scenarios.map((scenario) =>
      autocannon({ url: server.url, duration: minutes * 60, connections: 4, overallRate: rate, ...scenario.options(input) } as Options),
    ),
  );
  clearInterval(timer);
  for (const [i, r] of results.entries()) {
    const errors = r.errors + r.timeouts + r.non2xx;
    console.log(`${scenarios[i]?.name}: ${r.requests.total} requests, p99 ${r.latency.p99} ms, errors ${errors}`);
    if (errors > 0) failed = true;
  }
  // Memory is flat when the last third of the run is no higher than the middle third, give or take 10%.
  const third = Math.floor(samples.length / 3);
  const avg = (xs: { rssMb: number }[]) => xs.reduce((a, x) => a + x.rssMb, 0) / Math.max(1, xs.length);
  const middle = avg(samples.slice(third, 2 * third));
  const last = avg(samples.slice(2 * third));
  const fdsFirst = samples[third]?.fds ?? 0;
  const fdsLast = samples.at(-1)?.fds ?? 0;
  console.log(`memory: middle third ${Math.round(middle)} MB, last third ${Math.round(last)} MB; fds ${fdsFirst} -> ${fdsLast}`);
  if (third > 0 && last > middle * 1.1) {
    console.error('memory kept growing');
    failed = true;
  }
  if (fdsLast > fdsFirst + 20) {
    console.error('open handles kept growing');
    failed = true;
  }
} finally {
  await server.stop();
  await fresh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
