// npm run bench:live -- [--clients N (2000)] [--changes R (10 changes/s)] [--rate R (1000 events/s)]
//   [--seconds S (20, each half)] [--stores N (50)] [--stream-locations N (10)] [--dead refused|hang|500 (refused)]
//   [--only streams|webhooks] [--json FILE]
// Live streams and webhooks at a chain's scale, on one instance on PostgreSQL (BENCH_DATABASE_URL;
// the benchmark makes a database of its own there and drops it after):
// - streams: N Server-Sent Events clients (C6 and C8) and changes fanned out to them (streams.ts);
// - webhooks: R events a second delivered to a local receiver while another endpoint is dead
//   (webhooks.ts).
// --json FILE writes { streams: {...}, webhooks: {...}, machine: {...} } (bench/scenarios/run.ts embeds it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { cpuMsOfPid } from '../harness/cpu.ts';
import { serviceNodeFlags, startServer } from '../harness/server.ts';
import { benchOptions } from '../harness/world.ts';
import { round } from './stats.ts';
import { runStreamFlood } from './stream-flood.ts';
import { runStreams } from './streams.ts';
import { BENCH_APPLICATION, runWebhooks, startDead, startReceiver, type DeadKind } from './webhooks.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const clients = Number(option('clients', '2000'));
const changes = Number(option('changes', '10'));
const rate = Number(option('rate', '1000'));
const seconds = Number(option('seconds', '20'));
const stores = Number(option('stores', '50'));
const streamLocations = Number(option('stream-locations', '10'));
const deadKind = option('dead', 'refused') as DeadKind;
const only = option('only', 'both');
const jsonFile = args.includes('--json') ? option('json', '') : null;
/** --cpu-prof DIR: the service writes a CPU profile there when it stops. */
const profileDir = args.includes('--cpu-prof') ? path.resolve(option('cpu-prof', 'live-profile')) : null;
const databaseUrl = process.env.BENCH_DATABASE_URL;
if (
  databaseUrl === undefined ||
  !['refused', 'hang', '500'].includes(deadKind) ||
  ![clients, changes, rate, seconds, stores, streamLocations].every((n) => n > 0) ||
  streamLocations > stores ||
  !['both', 'streams', 'webhooks'].includes(only) ||
  jsonFile === ''
) {
  console.error(
    'usage: BENCH_DATABASE_URL=postgres://... node bench/live/live.ts [--clients N] [--changes R] [--rate R] [--seconds S] [--stores N]\n' +
      '  [--stream-locations N] [--dead refused|hang|500] [--only streams|webhooks] [--json FILE]',
  );
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '../..');
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

// A database of its own: nothing else's events reach its endpoints.
const admin = new pg.Client({ connectionString: databaseUrl });
await admin.connect();
const dbName = `live_bench_${process.pid}`;
await admin.query(`CREATE DATABASE ${dbName}`);
const benchUrl = new URL(databaseUrl);
benchUrl.pathname = `/${dbName}`;

const organizationId = 1;
const token = `bench-live-${crypto.randomBytes(12).toString('hex')}`;
const locations = Array.from({ length: stores }, (_, i) => 1001 + i);
const optionByLocation = new Map(locations.map((id) => [id, 5001 + id]));
const receiver = await startReceiver();
const dead = await startDead(deadKind);
const LIVE_ENDPOINT = 1;
const DEAD_ENDPOINT = 2;
const file = {
  organizations: [{ id: organizationId, name: 'Bench Grocery' }],
  locations: locations.map((id) => ({ id, organization_id: organizationId, name: `Store ${id}`, store_number: String(id), cfh_timeout_seconds: 3600 })),
  cfh_options: benchOptions(organizationId, optionByLocation),
  api_tokens: [{ name: 'bench', organization_id: organizationId, scopes: ['cfh', 'webhooks'], token }],
  webhooks: [
    { id: LIVE_ENDPOINT, organization_id: organizationId, url: receiver.url, secret: receiver.secret, events: ['callforhelp'] },
    { id: DEAD_ENDPOINT, organization_id: organizationId, url: dead.url, secret: crypto.randomBytes(24).toString('hex'), events: ['callforhelp'] },
  ],
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-live-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
fs.writeFileSync(path.join(dir, 'world.json'), JSON.stringify(file));

log(`live: ${clients} streams, ${changes} changes/s; ${rate} events/s over ${stores} stores, dead endpoint ${deadKind}; ${seconds} s each; load ${load()}`);
const server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
  DATABASE_URL: benchUrl.toString(),
  PROVISION_FILE: path.join(dir, 'world.json'),
  SECRET_TOKEN: crypto.randomBytes(18).toString('base64url'),
  WEBHOOK_ALLOW_PRIVATE: 'true',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  DATA_DIR: path.join(dir, 'data'),
  ...(profileDir === null ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` }),
});
/** The service's CPU time so far, in ms (user + system, from /proc). */
const cpuMs = () => cpuMsOfPid(server.pid) ?? 0;

/** Runs `during` while sampling, twice a second, the CPU time (ms, from /proc) of the service's
 * PostgreSQL backends in the benchmark's database (PostgreSQL on this machine): a backend's time
 * before it was first seen or after it was last seen is not counted. */
async function withDatabaseCpu<T>(during: () => Promise<T>): Promise<[T, number]> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2', [
      dbName,
      BENCH_APPLICATION,
    ]);
    for (const { pid } of rows) {
      const ms = cpuMsOfPid(pid);
      if (ms === null) continue; // the backend ended meanwhile
      if (!first.has(pid)) first.set(pid, ms);
      last.set(pid, ms);
    }
  };
  let done = false;
  const sampler = (async () => {
    while (!done) {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  let value: T;
  try {
    value = await during();
  } finally {
    done = true;
    await sampler;
    await sample();
  }
  let total = 0;
  for (const [pid, ms] of last) total += ms - (first.get(pid) ?? ms);
  return [value, total];
}

const result: Record<string, unknown> = {};
try {
  if (only !== 'webhooks') {
    const loadBefore = load();
    const cpuBefore = cpuMs();
    const streams = await runStreams({
      base: server.url,
      token,
      locations: locations.slice(0, streamLocations),
      optionByLocation,
      clients,
      rate: changes,
      seconds,
      log,
    });
    result.streams = {
      ...streams,
      target_p99_ms: 200,
      met: streams.fanout_ms.p99 < 200 && streams.errors === 0,
      load_before: loadBefore,
      load_after: load(),
      rss_mb: Math.round(server.rssKb() / 1024),
      service_cpu_ms: cpuMs() - cpuBefore,
    };
    log(`streams: ${JSON.stringify(result.streams)}`);
    const floodAt = locations[0] as number;
    result.stream_flood = await runStreamFlood({ base: server.url, token, locationId: floodAt, optionId: optionByLocation.get(floodAt) as number });
    log(`stream flood: ${JSON.stringify(result.stream_flood)}`);
  }
  if (only !== 'streams') {
    const loadBefore = load();
    const cpuBefore = cpuMs();
    const [webhooks, databaseCpu] = await withDatabaseCpu(() =>
      runWebhooks({
        databaseUrl: benchUrl.toString(),
        receiver,
        organizationId,
        locations,
        rate,
        seconds,
        drainSeconds: 5,
        deadKind,
        deadEndpointId: DEAD_ENDPOINT,
        liveEndpointId: LIVE_ENDPOINT,
        log,
      }),
    );
    const perDelivery = (ms: number) => round(ms / Math.max(1, webhooks.delivered_in_window), 2);
    result.webhooks = {
      ...webhooks,
      target_lag_p99_ms: 1000,
      met: webhooks.lag_ms.p99 < 1000 && webhooks.errors === 0,
      load_before: loadBefore,
      load_after: load(),
      service_cpu_ms_per_delivery: perDelivery(cpuMs() - cpuBefore),
      /** The service's PostgreSQL backends (fan-out, claims, attempt logs), not the benchmark's own. */
      database_cpu_ms_per_delivery: perDelivery(databaseCpu),
    };
    log(`webhooks: ${JSON.stringify(result.webhooks)}`);
  }
} finally {
  await server.stop();
  await receiver.close();
  await dead.close();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  fs.rmSync(dir, { recursive: true, force: true });
}
result.machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? '?', node: process.version, load_end: load(), at: new Date().toISOString() };
if (jsonFile !== null) fs.mkdirSync(path.dirname(path.resolve(jsonFile)), { recursive: true });
if (jsonFile !== null) fs.writeFileSync(jsonFile, `${JSON.stringify(result, null, 2)}\n`);
