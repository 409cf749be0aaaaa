// npm run bench [-- --quick] [-- --json FILE]
// Measures the service against the ceiling of its own stack (a bare Fastify hello-world), on the
// embedded defaults and, with BENCH_DATABASE_URL, on real PostgreSQL. Servers run in child
// processes; the load generator (autocannon) runs here.
import autocannon, { type Options, type Result } from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMsPerRequest, isLocalDatabase, sampleCpu, type CpuSample } from './cpu.ts';
import { freshPostgres } from './database.ts';
import { measureRadio, type RadioResult } from './radio.ts';
import { scenarios, type ScenarioInput } from './scenarios.ts';
import { seed } from './seed.ts';
import { serviceNodeFlags, startServer, type Server } from './server.ts';
import { makeBenchWorld } from './world.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const jsonIndex = args.indexOf('--json');
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined;
const root = path.resolve(import.meta.dirname, '..');

const settings = quick
  ? { duration: 3, connections: 16, world: { locations: 10, lockersPerLocation: 4, cabinetsPerLocker: 24 }, seedOrders: 300, seedRequests: 300, radioPerCaller: 8 }
  : { duration: 10, connections: 64, world: { locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 }, seedOrders: 2000, seedRequests: 3000, radioPerCaller: 40 };

export interface ScenarioResult {
  name: string;
  rps: number;
  cyclesPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  ratioToCeiling: number;
  /** CPU milliseconds per request: the service's process, and local PostgreSQL's (0 when remote or embedded). */
  serverCpuMs: number;
  databaseCpuMs: number;
  /** The service's resident memory when the scenario ended. */
  rssMb: number;
}

async function load(url: string, opts: Partial<Options>): Promise<Result> {
  return autocannon({ url, duration: settings.duration, connections: settings.connections, ...opts } as Options);
}

function summarize(name: string, result: Result, perCycle: number, ceiling: number, cpu: CpuSample, rssMb: number): ScenarioResult {
  const errors = result.errors + result.timeouts + result.non2xx;
  return {
    serverCpuMs: cpu.server,
    databaseCpuMs: cpu.database,
    rssMb,
    name,
    rps: Math.round(result.requests.average),
    cyclesPerSecond: Math.round(result.requests.average / perCycle),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors,
    ratioToCeiling: ceiling > 0 ? Math.round((result.requests.average / ceiling) * 1000) / 1000 : 1,
  };
}

interface BackendResult {
  backend: string;
  scenarios: ScenarioResult[];
  radio: RadioResult & { rssMb: number };
  peakRssMb: number;
}

async function benchBackend(backend: string, databaseUrl: string | null, ceiling: number): Promise<BackendResult> {
  const world = makeBenchWorld(settings.world);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-bench-'));
  const provisionFile = path.join(dir, 'world.json');
  fs.writeFileSync(provisionFile, JSON.stringify(world.file));
  const secret = crypto.randomBytes(18).toString('base64url');
  let server: Server | null = null;
  try {
    console.log(`\n[${backend}] starting the service with ${world.lockers.length} lockers, ${world.lockers.length * settings.world.cabinetsPerLocker} cabinets`);
    server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
      DATA_DIR: path.join(dir, 'data'), SECRET_TOKEN: secret, PROVISION_FILE: provisionFile, LOG_LEVEL: 'warn',
      MQTT_PORT: '0', HOST: '127.0.0.1', PORT: '0', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    const seeded = await seed(server.url, world, secret, settings.seedOrders, settings.seedRequests);
    console.log(`[${backend}] seeded ${settings.seedOrders} open orders and ${seeded.messageIds.length} CFH requests`);
    const input: ScenarioInput = { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds };
    const results: ScenarioResult[] = [];
    const localDb = isLocalDatabase(databaseUrl);
    for (const scenario of scenarios) {
      const before = sampleCpu(server.pid, localDb);
      const loaded = await load(server.url, scenario.options(input));
      const cpu = cpuMsPerRequest(before, sampleCpu(server.pid, localDb), loaded.requests.total);
      const result = summarize(scenario.name, loaded, scenario.requestsPerCycle, ceiling, cpu, Math.round(server.rssKb() / 1024));
      console.log(`[${backend}] ${result.name}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}, CPU ms/request: service ${cpu.server}, database ${localDb ? cpu.database : '-'}`);
      results.push(result);
    }
    const radio = { ...(await measureRadio(server, world, settings.radioPerCaller)), rssMb: Math.round(server.rssKb() / 1024) };
    console.log(`[${backend}] R1 to device: p50 ${radio.deviceP50} ms, p95 ${radio.deviceP95} ms, errors ${radio.errors}`);
    return { backend, scenarios: results, radio, peakRssMb: Math.round(server.peakRssKb() / 1024) };
  } finally {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(ceiling: Result, ceilingCpuMs: number, backends: BackendResult[]): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Run on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `${settings.connections} connections, ${settings.duration} s per scenario${quick ? ' (--quick)' : ''}. Service logging at warn.`,
    '',
    `Ceiling (bare Fastify hello-world): **${Math.round(ceiling.requests.average)} req/s**, p50 ${ceiling.latency.p50} ms, p99 ${ceiling.latency.p99} ms, ${ceilingCpuMs} ms of server CPU per request.`,
    '',
    'CPU ms/req: processor time per request of the service process and, when PostgreSQL runs on this machine, of its processes ' +
      '(read from /proc). The load generator runs on the same cores.',
    '',
  ];
  for (const b of backends) {
    const db = b.scenarios.some((s) => s.databaseCpuMs > 0);
    lines.push(`## ${b.backend} (peak RSS ${b.peakRssMb} MB)`, '',
      `| scenario | req/s | cycles/s | p50 ms | p99 ms | errors | of ceiling | service CPU ms/req |${db ? ' database CPU ms/req |' : ''} RSS after, MB |`,
      `|---|---|---|---|---|---|---|---|${db ? '---|' : ''}---|`);
    for (const s of b.scenarios) {
      lines.push(`| ${s.name} | ${s.rps} | ${s.cyclesPerSecond} | ${s.p50} | ${s.p99} | ${s.errors} | ${Math.round(s.ratioToCeiling * 100)}% | ${s.serverCpuMs} |${db ? ` ${s.databaseCpuMs} |` : ''} ${s.rssMb} |`);
    }
    lines.push(`| R1 synthesis to a connected edge device (2 callers) | ${b.radio.rps} | | ${b.radio.deviceP50} | p95 ${b.radio.deviceP95} | ${b.radio.errors} | | |${db ? ' |' : ''} ${b.radio.rssMb} |`, '');
    if (!db) lines.push('Embedded: the database runs inside the service process, so its CPU is in the service column.', '');
  }
  return `${lines.join('\n')}\n`;
}

const hello = await startServer(root, ['bench/hello.ts'], {});
let ceiling: Result;
let ceilingCpuMs: number;
try {
  const before = sampleCpu(hello.pid, false);
  ceiling = await load(hello.url, {});
  ceilingCpuMs = cpuMsPerRequest(before, sampleCpu(hello.pid, false), ceiling.requests.total).server;
  console.log(`ceiling: ${Math.round(ceiling.requests.average)} req/s, p99 ${ceiling.latency.p99} ms, CPU ms/request ${ceilingCpuMs}`);
} finally {
  await hello.stop();
}
const ceilingRps = ceiling.requests.average;
const backends: BackendResult[] = [await benchBackend('embedded (PGlite)', null, ceilingRps)];
const benchUrl = process.env.BENCH_DATABASE_URL;
if (benchUrl) {
  const db = await freshPostgres(benchUrl, 'storeops_bench');
  try {
    backends.push(await benchBackend('PostgreSQL', db.url, ceilingRps));
  } finally {
    await db.drop();
  }
}
const report = { date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version }, settings, ceiling: { rps: Math.round(ceilingRps), p50: ceiling.latency.p50, p99: ceiling.latency.p99, serverCpuMs: ceilingCpuMs }, backends };
fs.writeFileSync(path.join(root, 'bench/RESULTS.md'), markdown(ceiling, ceilingCpuMs, backends));
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(report, null, 2));
console.log('\nwrote bench/RESULTS.md');
const errors = backends.flatMap((b) => [...b.scenarios.map((s) => s.errors), b.radio.errors]).reduce((a, b) => a + b, 0);
if (errors > 0) {
  console.error(`${errors} errors during the benchmark`);
  process.exitCode = 1;
}
