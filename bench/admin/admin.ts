// npm run bench:admin [-- --seconds 10] [--admins 8] [--changes 200] [--json FILE (bench/out/admin.json)]
// Issue 33's "How fast": an admin write (updateCallButton, PATCH with If-Match) at 8 concurrent
// admins, each on a button of its own made through the administration (objects of the provisioning
// file are managed_by_file), with an `admin`-scope token; goal p99 < 50 ms on PostgreSQL. Then two
// instances on one database: a change on A, B's getCallButton polled until it shows the new
// version; goal < 1 s p99 from A's answer. On BENCH_DATABASE_URL (a throwaway database of it), else
// the embedded server (B reaches A's embedded server by its URL). Services in child processes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPostgres } from '../harness/database.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';
import { percentile, round, sleep } from '../live/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const seconds = Number(option('seconds', '10'));
const admins = Number(option('admins', '8'));
const changes = Number(option('changes', '200'));
const root = path.resolve(import.meta.dirname, '../..');
const jsonFile = path.resolve(option('json', path.join(root, 'bench/out/admin.json')));
const GOALS = { writeP99Ms: 50, reachP99Ms: 1000 } as const;
const log = (line: string) => console.log(line);

const loadAtStart = os.loadavg();
const world = makeBenchWorld({ locations: 1, lockersPerLocation: 1, cabinetsPerLocker: 1 });
const adminToken = `bench-admin-${crypto.randomBytes(12).toString('hex')}`;
const tokens = [{ name: 'bench-admin', organization_id: world.organizationId, scopes: ['admin'], token: adminToken }];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-admin-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
const provisionFile = path.join(dir, 'world.json');
fs.writeFileSync(provisionFile, JSON.stringify({ ...world.file, api_tokens: tokens }));
const fresh = process.env.BENCH_DATABASE_URL ? await freshPostgres(process.env.BENCH_DATABASE_URL, 'storeops_admin') : null;
const backend = fresh ? 'PostgreSQL' : 'embedded PostgreSQL';
const dataDir = path.join(dir, 'data');
const env = { DATA_DIR: dataDir, SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'), LOG_LEVEL: 'warn', HOST: '127.0.0.1', MQTT_PORT: '0' };
const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
const BUTTONS = '/api/admin/call_buttons';

async function api(base: string, method: string, url: string, body?: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(`${base}${url}`, { method, headers: { ...headers, ...extra }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as { id: number; version: number };
}
const mac = () => [...crypto.randomBytes(6)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');

let a: Server | null = null;
let b: Server | null = null;
try {
  a = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
    ...env,
    PROVISION_FILE: provisionFile,
    ...(fresh ? { DATABASE_URL: fresh.url } : {}),
  });
  b = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
    ...env,
    DATA_DIR: path.join(dir, 'data-b'),
    DATABASE_URL: fresh?.url ?? embeddedUrl(dataDir),
  });
  const locationId = world.locations[0] as number;
  const option_id = world.optionByLocation.get(locationId);
  const aUrl = a.url;
  const buttons: { id: number; version: number }[] = [];
  for (let i = 0; i < admins; i++)
    buttons.push(await api(a.url, 'POST', BUTTONS, { location_id: locationId, name: `Aisle ${i}`, device_key: mac(), option_id }));
  log(`[${backend}] ${admins} buttons made by the administration; ${admins} admins updating for ${seconds} s`);

  // Each admin changes its own button, one write after another, by the version its last answer gave.
  const times: number[] = [];
  const until = performance.now() + seconds * 1000;
  let writeErrors = 0;
  await Promise.all(
    buttons.map(async (button, i) => {
      for (let n = 0; performance.now() < until; n++) {
        const t0 = performance.now();
        try {
          button.version = (await api(aUrl, 'PATCH', `${BUTTONS}/${button.id}`, { name: `Aisle ${i}.${n}` }, { 'if-match': `"${button.version}"` })).version;
          times.push(performance.now() - t0);
        } catch {
          writeErrors++;
        }
      }
    }),
  );
  times.sort((x, y) => x - y);
  const write = { rps: Math.round(times.length / seconds), p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)), errors: writeErrors };
  log(`  updateCallButton: ${write.rps} req/s, p50 ${write.p50Ms} ms, p99 ${write.p99Ms} ms, errors ${writeErrors}`);

  // A change on A, then B's reads back to back until one shows it.
  const button = await api(a.url, 'POST', BUTTONS, { location_id: locationId, name: 'Reach', device_key: mac(), option_id });
  const reach: number[] = [];
  let version = button.version;
  for (let i = 0; i < changes; i++) {
    version = (await api(a.url, 'PATCH', `${BUTTONS}/${button.id}`, { enabled: i % 2 === 1 }, { 'if-match': `"${version}"` })).version;
    const t0 = performance.now();
    while ((await api(b.url, 'GET', `${BUTTONS}/${button.id}`)).version < version) if (performance.now() - t0 > 5000) throw new Error('B never saw the change');
    reach.push(performance.now() - t0);
    await sleep(10);
  }
  reach.sort((x, y) => x - y);
  const result = {
    date: new Date().toISOString(),
    backend,
    machine: { cpus: os.cpus().length, loadAverageAtStart: loadAtStart, loadAverage: os.loadavg() },
    settings: { seconds, admins, changes },
    write: { ...write, met: write.p99Ms < GOALS.writeP99Ms },
    reach: {
      p50Ms: round(percentile(reach, 50)),
      p99Ms: round(percentile(reach, 99)),
      maxMs: round(reach.at(-1) ?? 0),
      met: percentile(reach, 99) < GOALS.reachP99Ms,
    },
  };
  log(`  B's next read shows A's change: p50 ${result.reach.p50Ms} ms, p99 ${result.reach.p99Ms} ms, max ${result.reach.maxMs} ms over ${changes} changes`);
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
  fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2));
  if (writeErrors > 0) process.exitCode = 1;
} finally {
  await b?.stop();
  await a?.stop();
  await fresh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
