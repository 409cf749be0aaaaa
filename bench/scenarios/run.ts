// npm run bench [-- --quick] [-- --json FILE (bench/out/results.json)] [-- --history N [--history-rounds R]] [-- --no-fleet] [-- --no-live] [-- --no-long-reports] [-- --postgres-only]
// Measures the service against ceilings of its own stack: a bare Fastify hello-world; for each
// read, a bare Fastify server answering the same bytes and (on PostgreSQL) the read's statements
// alone. On the embedded defaults (the service's own PostgreSQL server in DATA_DIR) and, with
// BENCH_DATABASE_URL, on a throwaway database of that PostgreSQL, side by side; with
// --history N, again over N orders and N CFH requests of history. Then the fleet (bench/fleet/fleet.ts)
// and live streams and webhooks (bench/live/live.ts), each in its own process. Servers run in child
// processes; the load generator (autocannon) runs here. Writes its section of bench/RESULTS.md.
import autocannon from 'autocannon';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchBackend, type BackendResult, type Settings } from './backend.ts';
import { measureCpu } from '../harness/cpu.ts';
import { freshPostgres } from '../harness/database.ts';
import { exists, runJson, type Embedded } from './embedded.ts';
import { compare, GOALS } from '../summary/goals.ts';
import { markdown, writeSection, type HelloCeiling } from '../summary/markdown.ts';
import { sessionCosts } from '../summary/sessions.ts';
import { startServer } from '../harness/server.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
// The run's figures as JSON: --json FILE, else bench/out/results.json (gitignored; only the
// summary, bench/RESULTS.md, is committed).
const jsonFile = path.resolve(option('json') ?? path.join(import.meta.dirname, '../out/results.json'));
const history = Number(option('history') ?? 0);
if (!Number.isInteger(history) || history < 0) {
  console.error('--history N: a whole number of orders and of CFH requests');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '../..');
const log = (line: string) => console.log(line);
const loadAtStart = os.loadavg();
log(`load average at the start: ${loadAtStart.map((l) => l.toFixed(2)).join(', ')}`);

const historyRounds = Number(option('history-rounds') ?? 3);
if (!Number.isInteger(historyRounds) || historyRounds < 1) {
  console.error('--history-rounds N: a whole number of rounds, 1 or more');
  process.exit(2);
}

const settings: Settings = quick
  ? {
      duration: 3,
      connections: 16,
      world: { locations: 10, lockersPerLocation: 4, cabinetsPerLocker: 24 },
      seedOrders: 300,
      seedRequests: 300,
      radioPerCaller: 8,
      history,
      historyRounds,
      startRounds: 1,
    }
  : {
      duration: 10,
      connections: 64,
      world: { locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 },
      seedOrders: 2000,
      seedRequests: 3000,
      radioPerCaller: 40,
      history,
      historyRounds,
      startRounds: 3,
    };

async function helloWorld(): Promise<HelloCeiling> {
  const hello = await startServer(root, ['bench/scenarios/hello.ts'], {});
  try {
    const { loaded: r, cpu } = await measureCpu(hello.pid, null, () =>
      autocannon({ url: hello.url, duration: settings.duration, connections: settings.connections }),
    );
    const serverCpuMs = cpu.server;
    log(`hello-world: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms, CPU ms/request ${serverCpuMs}`);
    return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, serverCpuMs };
  } finally {
    await hello.stop();
  }
}

const hello = await helloWorld();
const benchUrl = process.env.BENCH_DATABASE_URL;
const backends: BackendResult[] =
  args.includes('--postgres-only') && benchUrl ? [] : [await benchBackend(root, settings, 'embedded PostgreSQL', null, hello.rps, log)];
if (benchUrl) {
  const db = await freshPostgres(benchUrl, 'storeops_bench');
  try {
    backends.push(await benchBackend(root, settings, 'PostgreSQL', db.url, hello.rps, log));
  } finally {
    await db.drop();
  }
} else if (history > 0) {
  log('--history needs BENCH_DATABASE_URL: skipped');
}

// Modest settings: the fleet's own benchmark (npm run bench:fleet) is where its goals are measured at scale.
const fleetArgs = quick ? ['--devices', '200', '--seconds', '5'] : ['--devices', '1000', '--seconds', '10'];
const fleet: Record<string, Embedded> = {};
if (!args.includes('--no-fleet')) {
  for (const broker of ['embedded', 'mosquitto']) fleet[broker] = await runJson(root, 'bench/fleet/fleet.ts', [...fleetArgs, '--broker', broker], log);
}
const live = !args.includes('--no-live') && exists(root, 'bench/live/live.ts') ? await runJson(root, 'bench/live/live.ts', [], log) : null;
// Issue 36, item 1: P1 over ten years of 500,000 requests, and C5 beside 20 of them.
const longReports = args.includes('--no-long-reports') ? null : await runJson(root, 'bench/reports/long-range.ts', quick ? ['--quick'] : [], log);
// Issue 33: an admin write at 8 admins and its reach to a second instance; issue 34: 500 staff phones.
const admin = await runJson(root, 'bench/admin/admin.ts', quick ? ['--seconds', '3', '--changes', '40'] : [], log);
const staff = await runJson(root, 'bench/staff/staff.ts', quick ? ['--phones', '100', '--requests', '10'] : [], log);

const extra: string[] = [];
interface FleetFigures {
  connect?: { seconds?: number };
  rssMb?: { perThousandDevices?: number };
  afterConnectCpuPercent?: { service?: number; seconds?: number };
  idleCpuPercent?: { service?: number; perThousandDevices?: number };
  delivery?: { p50Ms?: number; p99Ms?: number; errors?: number };
  reconnect?: { firstCommandMs?: number };
}
if (Object.keys(fleet).length > 0) {
  extra.push(
    `### Fleet (${fleetArgs.join(' ')}; the fleet's own benchmark, \`npm run bench:fleet\`, measures it at scale)`,
    '',
    '| broker | exit | connect s | RSS MB per 1,000 devices | CPU % just after the connect | idle CPU % after it (per 1,000) | delivery p50 / p99 ms | errors | first command after a reconnect, ms |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const [broker, f] of Object.entries(fleet)) {
    const r = (f.result ?? {}) as FleetFigures;
    extra.push(
      `| ${broker} | ${f.exitCode} | ${r.connect?.seconds ?? '?'} | ${r.rssMb?.perThousandDevices ?? '?'} | ${r.afterConnectCpuPercent?.service ?? '?'} (${r.afterConnectCpuPercent?.seconds ?? '?'} s) | ${r.idleCpuPercent?.service ?? '?'} (${r.idleCpuPercent?.perThousandDevices ?? '?'}) | ${r.delivery?.p50Ms ?? '?'} / ${r.delivery?.p99Ms ?? '?'} | ${r.delivery?.errors ?? '?'} | ${r.reconnect?.firstCommandMs ?? '?'} |`,
    );
  }
  extra.push('');
}
if (live)
  extra.push(
    `### Live streams and webhooks (\`${live.command.replace(/ --json \S+/, '')}\`, exit ${live.exitCode})`,
    '',
    '```json',
    JSON.stringify(live.result, null, 1),
    '```',
    '',
  );
if (longReports)
  extra.push(
    `### P1 over ten years, and C5 beside 20 of them (\`${longReports.command.replace(/ --json \S+/, '')}\`, exit ${longReports.exitCode})`,
    '',
    '```json',
    JSON.stringify(longReports.result, null, 1),
    '```',
    '',
  );
for (const [title, run] of [
  ['Admin writes and their reach to a second instance (issue 33)', admin],
  ['Staff phones reached by a request (issue 34)', staff],
] as const)
  extra.push(
    `### ${title} (\`${run.command.replace(/ --json \S+/, '')}\`, exit ${run.exitCode})`,
    '',
    '```json',
    JSON.stringify(run.result, null, 1),
    '```',
    '',
  );
const embedded = backends.find((b) => b.embedded);
function summaryOf(b: BackendResult) {
  return {
    backend: b.backend,
    idleRssMb: b.idle.rssMb,
    idlePssMb: b.idle.totalPssMb,
    start: b.start && { firstMs: b.start.firstMs, laterMs: b.start.laterMs },
    scenarios: Object.fromEntries(
      b.scenarios.map((s) => [
        s.name,
        {
          rps: s.rps,
          p99: s.p99,
          errors: s.errors,
          ratioToHelloWorld: s.ratioToHelloWorld,
          ratioToPayloadCeiling: s.ratioToPayloadCeiling,
          ratioToDatabaseCeiling: s.ratioToDatabaseCeiling,
          ratioToLowerCeiling: s.ratioToLowerCeiling,
        },
      ]),
    ),
    /** Issue 32: the session's cost per read, and C5's p99 beside 20 password sign-ins a second. */
    sessions: {
      ...sessionCosts(b.scenarios),
      signInLoad: { p99Alone: b.signInLoad.p99Alone, p99WithSignIns: b.signInLoad.p99WithSignIns, p99Ratio: b.signInLoad.p99Ratio, met: b.signInLoad.met },
    },
    history: b.history && {
      rows: b.history.rows,
      rounds: b.history.rounds,
      ratios: Object.fromEntries(b.history.scenarios.map((s) => [s.name, s.ratioToEmpty])),
      cpuRatios: Object.fromEntries(b.history.scenarios.map((s) => [s.name, s.cpuRatioToEmpty])),
      p1: b.history.reports.p1,
    },
  };
}
const report = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverage: os.loadavg(),
    loadAverageAtStart: loadAtStart,
  },
  settings,
  ceiling: hello,
  helloWorld: hello,
  backends,
  /** The last backend's (PostgreSQL when BENCH_DATABASE_URL is set) figures by scenario, and its history run. */
  summary: summaryOf(backends.at(-1) as BackendResult),
  /** Issue 29: the embedded PostgreSQL server against the machine's, and its memory and start goals. */
  embeddedGoals: embedded ? { goals: GOALS, embedded: summaryOf(embedded), ...compare(embedded, backends.find((b) => !b.embedded) ?? null) } : null,
  fleet: Object.fromEntries(Object.entries(fleet).map(([k, v]) => [k, v.result])),
  live: live?.result ?? null,
  longReports: longReports?.result ?? null,
  admin: admin.result,
  staff: staff.result,
};
writeSection(path.join(root, 'bench/RESULTS.md'), markdown(settings, quick, hello, backends, extra, loadAtStart));
fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
fs.writeFileSync(jsonFile, JSON.stringify(report, null, 2));
log(`\nwrote the benchmark section of bench/RESULTS.md and the run's JSON to ${path.relative(root, jsonFile)}`);
// The scenarios' own errors (the embedded fleet and live runs report theirs in their figures).
const errors = backends
  .flatMap((b) => [...b.scenarios.map((s) => s.errors), b.radio.errors, ...(b.history?.scenarios.map((s) => s.errors) ?? [])])
  .reduce((a, b) => a + b, 0);
if (errors > 0) {
  console.error(`${errors} errors during the benchmark`);
  process.exitCode = 1;
}
