// One backend's part of `npm run bench`: the service in a child process, seeded through its API,
// each scenario under load beside its ceilings (the same payload from a bare Fastify server; the
// scenario's statements alone), the start times, the idle footprint, R1, and with --history N
// (external PostgreSQL) the scenarios again over a chain's history. The embedded backend is the
// service as `npm start` runs it, without DATABASE_URL: it starts its own PostgreSQL server in
// DATA_DIR/postgres, which the benchmark reaches on its Unix socket to vacuum it, to count its
// backends' CPU and to time the statements alone, as it does the external PostgreSQL.
import autocannon, { type Options, type Result } from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseCeiling, hasDatabaseCeiling } from './ceilings.ts';
import { freshPostgres, vacuum } from '../harness/database.ts';
import { isLocalDatabase, measureCpu, type CpuMs } from '../harness/cpu.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { idleFootprint, probeArgs, type Footprint } from '../harness/footprint.ts';
import { historyRun, type HistoryResult } from '../history/run.ts';
import { payloadCeiling } from './payload.ts';
import { measureRadio, type RadioResult } from './radio.ts';
import { scenarios, type ScenarioInput } from './scenarios.ts';
import { describeSignInLoad, measureSignInLoad, type SignInLoadResult } from './sign-in-load.ts';
import { benchSession } from '../harness/people.ts';
import { seed } from '../harness/seed.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { dataDirRounds, startTimes, type StartTimes } from '../harness/start-time.ts';
import { makeBenchWorld } from '../harness/world.ts';

export interface Settings {
  duration: number;
  connections: number;
  world: { locations: number; lockersPerLocation: number; cabinetsPerLocker: number };
  seedOrders: number;
  seedRequests: number;
  radioPerCaller: number;
  history: number;
  /** Rounds of each scenario on each side with --history (3). */
  historyRounds?: number;
  /** false: the scenarios only, without their ceilings (bench/plan-cache.ts). */
  ceilings?: boolean;
  /** Node flags added to `npm start`'s (bench/scenarios/flags.ts). */
  nodeFlags?: string[];
  /** Rounds of start-time measurement (a first and a later start each); 0 or absent: not measured. */
  startRounds?: number;
}

export interface ScenarioResult {
  name: string;
  rps: number;
  cyclesPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  /** requests per second / the hello-world's (ratioToCeiling: the same, its former name). */
  ratioToHelloWorld: number;
  ratioToCeiling: number;
  /** Reads: a bare Fastify server answering the same bytes; on PostgreSQL, the statements alone. null: not measured. */
  payloadCeilingRps: number | null;
  databaseCeilingRps: number | null;
  ratioToPayloadCeiling: number | null;
  ratioToDatabaseCeiling: number | null;
  /** The ratio to the lower of the two ceilings (to the one measured, when only one is). */
  ratioToLowerCeiling: number | null;
  /** CPU milliseconds per request: the service's process, and its database's backends' when it runs on this machine (0 when remote). */
  serverCpuMs: number;
  databaseCpuMs: number;
  /** The service's resident memory when the scenario ended. */
  rssMb: number;
}

export interface BackendResult {
  backend: string;
  /** Whether the service ran its embedded PostgreSQL server (no DATABASE_URL). */
  embedded: boolean;
  /** The machine's load average when this backend's part began and ended. */
  loadAverage: { start: number[]; end: number[] };
  /** Spawn to "Server listening": first start (initdb or migrations included) and a later one; null: not measured. */
  start: StartTimes | null;
  scenarios: ScenarioResult[];
  radio: RadioResult & { rssMb: number };
  /** Issue 32: C5 alone and beside 20 password sign-ins a second (bench/scenarios/sign-in-load.ts). */
  signInLoad: SignInLoadResult;
  peakRssMb: number;
  idle: Footprint;
  history: HistoryResult | null;
}

const ratio = (a: number, b: number | null) => (b === null || b <= 0 ? null : Math.round((a / b) * 1000) / 1000);

/**
 * `databaseUrl` is the service's DATABASE_URL: null runs the service on its embedded PostgreSQL
 * server. Either way the benchmark reads the database (vacuum, CPU, statements alone) at `readUrl`:
 * DATABASE_URL, or the embedded server's socket. History runs only with a DATABASE_URL (its
 * second database is made beside it).
 */
export async function benchBackend(
  root: string,
  settings: Settings,
  backend: string,
  databaseUrl: string | null,
  helloRps: number,
  log: (line: string) => void,
): Promise<BackendResult> {
  const loadAtStart = os.loadavg();
  const load = (url: string, opts: Partial<Options>): Promise<Result> =>
    autocannon({ url, duration: settings.duration, connections: settings.connections, ...opts } as Options);
  const world = makeBenchWorld(settings.world);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-bench-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  const provisionFile = path.join(dir, 'world.json');
  const probeFileOf = (name: string) => path.join(dir, `${name}-memory.json`);
  fs.writeFileSync(provisionFile, JSON.stringify(world.file));
  const secret = crypto.randomBytes(18).toString('base64url');
  let server: Server | null = null;
  const embedded = databaseUrl === null;
  const dataDir = path.join(dir, 'data');
  const readUrl = databaseUrl ?? embeddedUrl(dataDir);
  try {
    const start =
      (settings.startRounds ?? 0) > 0
        ? await startTimes(
            root,
            settings.startRounds ?? 0,
            dataDirRounds(dir, async () => (embedded ? { url: null, drop: async () => {} } : freshPostgres(databaseUrl, 'storeops_start'))),
            log,
          )
        : null;
    if (start)
      log(
        `[${backend}] start to "Server listening", median of ${start.first.length}: first ${start.firstMs} ms${embedded ? ' (initdb included)' : ' (migrations included)'}, later ${start.laterMs} ms`,
      );
    log(`\n[${backend}] starting the service with ${world.lockers.length} lockers, ${world.lockers.length * settings.world.cabinetsPerLocker} cabinets`);
    const startService = (url: string | null, name: string) =>
      startServer(root, [...probeArgs(), ...serviceNodeFlags(root), ...(settings.nodeFlags ?? []), 'src/main.ts'], {
        DATA_DIR: path.join(dir, name),
        SECRET_TOKEN: secret,
        PROVISION_FILE: provisionFile,
        LOG_LEVEL: 'warn',
        MEMORY_PROBE_FILE: probeFileOf(name),
        MQTT_PORT: '0',
        HOST: '127.0.0.1',
        PORT: '0',
        ...(url ? { DATABASE_URL: url } : {}),
      });
    server = await startService(databaseUrl, 'data');
    const idle = await idleFootprint(server, probeFileOf('data'), embedded ? dataDir : null);
    log(
      `[${backend}] idle: RSS ${idle.rssMb} MB (mapped files ${idle.fileMb}, V8 heap ${idle.heapTotalMb} of which used ${idle.heapUsedMb}, external ${idle.externalMb}, other native ${idle.nativeMb}); ` +
        `PSS: service ${idle.pssMb} MB${idle.embedded ? ` + embedded server ${idle.embedded.pssMb} MB in ${idle.embedded.processes.length} processes (their RSS ${idle.embedded.rssMb} MB)` : ''} = ${idle.totalPssMb} MB`,
    );
    const seeded = await seed(server.url, world, secret, settings.seedOrders, settings.seedRequests);
    const session = await benchSession(server.url, readUrl, world);
    log(`[${backend}] seeded ${settings.seedOrders} open orders and ${seeded.messageIds.length} CFH requests; ${world.person.email} signed in`);
    const input: ScenarioInput = { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session };
    const results: ScenarioResult[] = [];
    const localDb = isLocalDatabase(readUrl);
    const run = (scenario: (typeof scenarios)[number]) => measureCpu((server as Server).pid, readUrl, () => load(input.url, scenario.options(input)));
    for (const scenario of scenarios) {
      await vacuum(readUrl);
      const { loaded, cpu } = await run(scenario);
      const measureCeilings = settings.ceilings !== false;
      const payload = measureCeilings && scenario.reads ? (await payloadCeiling(root, dir, scenario, input, load)).rps : null;
      const database =
        measureCeilings && hasDatabaseCeiling(scenario.name)
          ? (await databaseCeiling(readUrl, scenario.name, input, settings.duration, settings.connections)).rps
          : null;
      const lower = [payload, database].filter((x): x is number => x !== null);
      const result = summarize(scenario.name, loaded, scenario.requestsPerCycle, helloRps, cpu, Math.round(server.rssKb() / 1024), {
        payloadCeilingRps: payload,
        databaseCeilingRps: database,
        ratioToPayloadCeiling: ratio(loaded.requests.average, payload),
        ratioToDatabaseCeiling: ratio(loaded.requests.average, database),
        ratioToLowerCeiling: ratio(loaded.requests.average, lower.length ? Math.min(...lower) : null),
      });
      log(
        `[${backend}] ${result.name}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}, CPU ms/request: service ${cpu.server}, database ${localDb ? cpu.database : '-'}` +
          (payload === null
            ? ''
            : `; same payload ${payload} req/s, statements alone ${database ?? '-'} req/s: ${Math.round((result.ratioToLowerCeiling ?? 0) * 100)}% of the lower`),
      );
      results.push(result);
    }
    await vacuum(readUrl);
    const signInLoad = await measureSignInLoad({
      server,
      readUrl,
      input,
      probeFile: probeFileOf('data'),
      load,
      seconds: settings.duration,
      connections: settings.connections,
      rounds: 2,
    });
    log(`[${backend}] password sign-ins beside C5: ${describeSignInLoad(signInLoad)}`);
    const radio = { ...(await measureRadio(server, world, settings.radioPerCaller)), rssMb: Math.round(server.rssKb() / 1024) };
    log(`[${backend}] R1 to device: p50 ${radio.deviceP50} ms, p95 ${radio.deviceP95} ms, errors ${radio.errors}`);
    const history =
      databaseUrl !== null && settings.history > 0
        ? await historyRun({
            settings,
            rounds: settings.historyRounds ?? 3,
            world,
            secret,
            empty: { server, databaseUrl, input },
            startService: (url) => startService(url, 'history'),
            load,
            log,
          })
        : null;
    return {
      backend,
      embedded,
      loadAverage: { start: loadAtStart, end: os.loadavg() },
      start,
      scenarios: results,
      radio,
      signInLoad,
      peakRssMb: Math.round(server.peakRssKb() / 1024),
      idle,
      history,
    };
  } finally {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function summarize(
  name: string,
  result: Result,
  perCycle: number,
  helloRps: number,
  cpu: CpuMs,
  rssMb: number,
  ceilings: Partial<ScenarioResult>,
): ScenarioResult {
  const hello = ratio(result.requests.average, helloRps) ?? 1;
  return {
    name,
    rps: Math.round(result.requests.average),
    cyclesPerSecond: Math.round(result.requests.average / perCycle),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
    ratioToHelloWorld: hello,
    ratioToCeiling: hello,
    payloadCeilingRps: null,
    databaseCeilingRps: null,
    ratioToPayloadCeiling: null,
    ratioToDatabaseCeiling: null,
    ratioToLowerCeiling: null,
    ...ceilings,
    serverCpuMs: cpu.server,
    databaseCpuMs: cpu.database,
    rssMb,
  };
}
