// npm run bench:sessions [-- --seconds 5] [--connections 64] [--rounds 2] [--rate 20] [--c5-rate N|auto|0]
//   [--database-url URL (else BENCH_DATABASE_URL, else the embedded server)] [--json FILE (bench/out/sessions.json)]
// Issue 32's measurements on their own, without the rest of `npm run bench` (which runs them too):
// one service on the bench's world (50 stores, 2,000 open orders, 3,000 CFH requests), its person
// signed in once; C5 read, the console's queue read signed in, getSession signed in and signed out,
// in alternating rounds (medians), for the service's CPU per request and the session lookup's
// share of it; then C5's p99 alone and beside 20 password sign-ins a second, as fast as the
// connections go (as `npm run bench` does) and at a fixed C5 rate below that (`auto`: half of what
// C5 made alone in the rounds; 0: not measured).
import autocannon, { type Options, type Result } from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureCpu, type CpuMs } from '../harness/cpu.ts';
import { freshPostgres, vacuum } from '../harness/database.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { probeArgs } from '../harness/footprint.ts';
import { benchSession } from '../harness/people.ts';
import { seed } from '../harness/seed.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';
import { sessionCosts, sessionsMarkdown } from '../summary/sessions.ts';
import { scenarios, type ScenarioInput } from './scenarios.ts';
import { describeSignInLoad, measureSignInLoad, type SignInLoadResult } from './sign-in-load.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const seconds = Number(option('seconds', '5'));
const connections = Number(option('connections', '64'));
const rounds = Number(option('rounds', '2'));
const rate = Number(option('rate', '20'));
const c5RateOption = option('c5-rate', 'auto');
const root = path.resolve(import.meta.dirname, '../..');
const jsonFile = path.resolve(option('json', path.join(root, 'bench/out/sessions.json')));
const baseUrl = option('database-url', process.env.BENCH_DATABASE_URL ?? '');
const log = (line: string) => console.log(line);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

const NAMES = ['C5 read', 'console queue read (signed in)', 'session read (signed in)', 'session read (signed out)'];
const chosen = NAMES.map((n) => {
  const s = scenarios.find((x) => x.name === n);
  if (s === undefined) throw new Error(`no scenario ${n}`);
  return s;
});

const loadAtStart = os.loadavg();
log(`load average at the start: ${loadAtStart.map((l) => l.toFixed(2)).join(', ')}`);
const world = makeBenchWorld({ locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-sessions-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
const provisionFile = path.join(dir, 'world.json');
fs.writeFileSync(provisionFile, JSON.stringify(world.file));
const probeFile = path.join(dir, 'probe.json');
const secret = crypto.randomBytes(18).toString('base64url');
const fresh = baseUrl ? await freshPostgres(baseUrl, 'storeops_sessions') : null;
const dataDir = path.join(dir, 'data');
const readUrl = fresh?.url ?? embeddedUrl(dataDir);
const backend = fresh ? 'PostgreSQL' : 'embedded PostgreSQL';
let server: Server | null = null;
try {
  server = await startServer(root, [...probeArgs(), ...serviceNodeFlags(root), 'src/main.ts'], {
    DATA_DIR: dataDir,
    SECRET_TOKEN: secret,
    PROVISION_FILE: provisionFile,
    LOG_LEVEL: 'warn',
    MEMORY_PROBE_FILE: probeFile,
    HOST: '127.0.0.1',
    ...(fresh ? { DATABASE_URL: fresh.url } : {}),
  });
  const seeded = await seed(server.url, world, secret, 2000, 3000);
  const session = await benchSession(server.url, readUrl, world);
  const input: ScenarioInput = { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session };
  log(`[${backend}] seeded, ${world.person.email} signed in; ${rounds} rounds of ${seconds} s at ${connections} connections`);
  const load = (url: string, opts: Partial<Options>): Promise<Result> => autocannon({ url, duration: seconds, connections, ...opts } as Options);
  await vacuum(readUrl);

  interface Round {
    rps: number;
    p99: number;
    errors: number;
    cpu: CpuMs;
  }
  const results = new Map<string, Round[]>(chosen.map((s) => [s.name, []]));
  for (let i = 0; i < rounds; i++) {
    // Each round in another order, so a trend in the machine's load favours no scenario.
    for (let k = 0; k < chosen.length; k++) {
      const scenario = chosen[(k + i) % chosen.length] as (typeof chosen)[number];
      const { loaded, cpu } = await measureCpu(server.pid, readUrl, () => load(input.url, scenario.options(input)));
      const errors = loaded.errors + loaded.timeouts + loaded.non2xx;
      results.get(scenario.name)?.push({ rps: loaded.requests.average, p99: loaded.latency.p99, errors, cpu });
      log(
        `  round ${i + 1} ${scenario.name}: ${Math.round(loaded.requests.average)} req/s, p99 ${loaded.latency.p99} ms, errors ${errors}, CPU ${cpu.server} + ${cpu.database} ms/req`,
      );
    }
  }
  const figures = chosen.map((s) => {
    const rs = results.get(s.name) ?? [];
    return {
      name: s.name,
      rps: Math.round(median(rs.map((r) => r.rps))),
      p99: median(rs.map((r) => r.p99)),
      errors: rs.reduce((n, r) => n + r.errors, 0),
      serverCpuMs: r3(median(rs.map((r) => r.cpu.server))),
      databaseCpuMs: r3(median(rs.map((r) => r.cpu.database))),
      rounds: rs.map((r) => ({ rps: Math.round(r.rps), p99: r.p99, serverCpuMs: r.cpu.server, databaseCpuMs: r.cpu.database })),
    };
  });
  const costs = sessionCosts(figures);
  log(
    `[${backend}] medians, CPU ms/req service + database: ${figures.map((f) => `${f.name} ${f.serverCpuMs} + ${f.databaseCpuMs}`).join('; ')}; ` +
      `the session's lookup ${costs.lookup?.serverCpuMs} + ${costs.lookup?.databaseCpuMs}`,
  );

  const signInRuns: SignInLoadResult[] = [];
  const context = { server, readUrl, input, probeFile, load, seconds, connections, rounds, rate };
  await vacuum(readUrl);
  signInRuns.push(await measureSignInLoad(context));
  log(`[${backend}] ${describeSignInLoad(signInRuns[0] as SignInLoadResult)}`);
  const c5Alone = costs.c5?.rps ?? 0;
  const c5Rate = c5RateOption === 'auto' ? Math.round(c5Alone / 2) : Number(c5RateOption);
  if (c5Rate > 0) {
    signInRuns.push(await measureSignInLoad({ ...context, c5Rate }));
    log(`[${backend}] ${describeSignInLoad(signInRuns[1] as SignInLoadResult)}`);
  }
  const loadAtEnd = os.loadavg();
  const heading =
    `### ${backend}: sign-in and sessions (\`npm run bench:sessions\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
    `${connections} connections, ${rounds} rounds of ${seconds} s, load ${loadAtStart.map((l) => l.toFixed(1)).join(', ')} → ${loadAtEnd.map((l) => l.toFixed(1)).join(', ')})`;
  const markdown = sessionsMarkdown(heading, costs, signInRuns).join('\n');
  log(`\n${markdown}`);
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
  fs.writeFileSync(
    jsonFile,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        backend,
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverageAtStart: loadAtStart, loadAverage: loadAtEnd },
        settings: { seconds, connections, rounds, rate },
        scenarios: figures,
        sessions: costs,
        signInLoad: signInRuns,
      },
      null,
      2,
    ),
  );
  log(`\nwrote ${path.relative(root, jsonFile)}`);
  if (
    figures.some((f) => f.errors > 0) ||
    signInRuns.some((r) => Object.keys(r.signIns.failed).length > 0 || [...r.alone, ...r.withSignIns].some((p) => p.errors > 0))
  ) {
    console.error('errors during the run');
    process.exitCode = 1;
  }
} finally {
  await server?.stop();
  await fresh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
