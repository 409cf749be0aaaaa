// npm run bench:staff [-- --phones 500] [--stores 10] [--requests 40] [--json FILE (bench/out/staff.json)]
// Issue 34's "How fast": the staff app's phones, each on its store's live stream (the console's
// streamConsoleChanges, with a person's session cookie, as the app opens it), spread evenly over the
// stores; then C0 requests, one at a time at a store in turn: the time from sending each to its
// `change` event at every phone of its store; goal < 1 s p99. On BENCH_DATABASE_URL (a throwaway
// database of it), else the embedded server. The service in a child process.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPostgres } from '../harness/database.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { benchSession } from '../harness/people.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';
import { percentile, round, sleep } from '../live/stats.ts';
import { inParallel, openStream } from '../live/streams.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const phones = Number(option('phones', '500'));
const stores = Number(option('stores', '10'));
const requests = Number(option('requests', '40'));
const root = path.resolve(import.meta.dirname, '../..');
const jsonFile = path.resolve(option('json', path.join(root, 'bench/out/staff.json')));
const GOAL_P99_MS = 1000;
const log = (line: string) => console.log(line);

const loadAtStart = os.loadavg();
const world = makeBenchWorld({ locations: stores, lockersPerLocation: 1, cabinetsPerLocker: 1 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-staff-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
const provisionFile = path.join(dir, 'world.json');
fs.writeFileSync(provisionFile, JSON.stringify(world.file));
const fresh = process.env.BENCH_DATABASE_URL ? await freshPostgres(process.env.BENCH_DATABASE_URL, 'storeops_staff') : null;
const backend = fresh ? 'PostgreSQL' : 'embedded PostgreSQL';
const dataDir = path.join(dir, 'data');
let server: Server | null = null;
const streams: { close(): void }[] = [];
try {
  server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
    DATA_DIR: dataDir,
    SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'),
    PROVISION_FILE: provisionFile,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    ...(fresh ? { DATABASE_URL: fresh.url } : {}),
  });
  const base = server.url;
  const session = await benchSession(base, fresh?.url ?? embeddedUrl(dataDir), world);
  // Per store, when each of its phones last heard a change.
  const heard = new Map<number, number[]>(world.locations.map((l) => [l, []]));
  const started = performance.now();
  await inParallel(
    Array.from({ length: phones }, (_, n) => n),
    50,
    async (n) => {
      const store = world.locations[n % stores] as number;
      const times = heard.get(store) as number[];
      const slot = times.push(0) - 1;
      streams.push(
        await openStream(
          base,
          `/console/api/locations/${store}/stream`,
          n,
          { cookie: session.cookie },
          (event) => event === 'change' && (times[slot] = performance.now()),
        ),
      );
    },
  );
  log(`[${backend}] ${phones} phones on ${stores} stores' streams in ${Math.round(performance.now() - started)} ms`);

  const latencies: number[] = [];
  let missing = 0;
  for (let i = 0; i < requests; i++) {
    const store = world.locations[i % stores] as number;
    const times = heard.get(store) as number[];
    times.fill(0);
    const t0 = performance.now();
    const res = await fetch(`${base}/api/callforhelp/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ location_id: store, option_id: world.optionByLocation.get(store) }),
    });
    if (res.status !== 201) throw new Error(`C0: ${res.status} ${await res.text()}`);
    while (times.some((t) => t === 0) && performance.now() - t0 < 5000) await sleep(5);
    for (const t of times)
      if (t === 0) missing++;
      else latencies.push(t - t0);
    await sleep(100);
  }
  latencies.sort((x, y) => x - y);
  const result = {
    date: new Date().toISOString(),
    backend,
    machine: { cpus: os.cpus().length, loadAverageAtStart: loadAtStart, loadAverage: os.loadavg() },
    settings: { phones, stores, requests },
    reach: {
      deliveries: latencies.length,
      missing,
      p50Ms: round(percentile(latencies, 50)),
      p99Ms: round(percentile(latencies, 99)),
      maxMs: round(latencies.at(-1) ?? 0),
    },
    met: missing === 0 && percentile(latencies, 99) < GOAL_P99_MS,
  };
  log(`  a request reaches its store's phones: p50 ${result.reach.p50Ms} ms, p99 ${result.reach.p99Ms} ms, max ${result.reach.maxMs} ms; ${missing} missing`);
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
  fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2));
  if (missing > 0) process.exitCode = 1;
} finally {
  for (const s of streams) s.close();
  await server?.stop();
  await fresh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
