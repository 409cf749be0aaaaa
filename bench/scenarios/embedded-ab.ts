// node bench/scenarios/embedded-ab.ts [--rounds 3] [--seconds 10] [--connections 64] [--only l1,c5,order,cfh,l7]
//   [--side NAME=SPEC ...]
// The embedded PostgreSQL server against another database, side by side on a shared machine: every
// side's service runs at once, seeded alike, and each scenario runs in rounds alternating between
// the sides (A B, then B A, ...), so that the machine's other load weighs on each alike; figures are
// medians of the rounds, with the CPU per request of each service and of its database's backends.
// A SPEC is one of:
//   embedded          the service without DATABASE_URL (its own server in DATA_DIR/postgres)
//   url:URL           a throwaway database made beside URL's (as `npm run bench` does)
//   server:K=V;K=V    a PostgreSQL server of the embedded binaries that this tool starts in a
//                     directory of its own with these settings (`-c K=V`; the embedded server's
//                     own otherwise), the service on it through DATABASE_URL: what a setting of
//                     src/db/embedded/server.ts would change, measured without changing it
//   server@BIN:K=V;...  the same with the initdb and postgres programs of the directory BIN (e.g.
//                     the machine's /usr/lib/postgresql/15/bin): another build of PostgreSQL under
//                     the embedded server's settings, to tell the binaries from the configuration
// Default sides: embedded, and url:BENCH_DATABASE_URL when it is set.
import autocannon, { type Options } from 'autocannon';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findBinaries } from '../../src/db/embedded/binaries.ts';
import { serverUser } from '../../src/db/embedded/server-user.ts';
import { measureCpu, type CpuMs } from '../harness/cpu.ts';
import { freshPostgres, vacuum } from '../harness/database.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { scenarios, type ScenarioInput } from './scenarios.ts';
import { benchSession } from '../harness/people.ts';
import { seed } from '../harness/seed.ts';
import { serviceNodeFlags, startServer, type Server } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const rounds = Number(option('rounds', '3'));
const seconds = Number(option('seconds', '10'));
const connections = Number(option('connections', '64'));
const short: Record<string, string> = {
  l1: 'L1 read',
  order: 'order cycle (L2, L5 agree, L6)',
  c5: 'C5 read',
  cfh: 'CFH cycle (C0, C1, C3)',
  l7: 'L7 device report',
};
const only = option('only', '')
  .split(',')
  .filter(Boolean)
  .map((s) => short[s] ?? s);
const specs = args.flatMap((a, i) => (a === '--side' && args[i + 1] ? [args[i + 1] as string] : []));
if (specs.length === 0) {
  specs.push('embedded=embedded');
  if (process.env.BENCH_DATABASE_URL) specs.push(`postgres=url:${process.env.BENCH_DATABASE_URL}`);
}
const root = path.resolve(import.meta.dirname, '../..');
const log = (line: string) => console.log(line);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

interface Side {
  name: string;
  server: Server;
  /** Where the benchmark reads the database. */
  readUrl: string;
  input: ScenarioInput;
}

/** A PostgreSQL server of the embedded binaries in `dir`, with these settings; its URL and how to stop it. */
async function ownServer(dir: string, settings: Record<string, string>, bin: string | null): Promise<{ url: string; stop: () => Promise<void> }> {
  fs.mkdirSync(dir, { mode: 0o755 });
  const binaries =
    bin === null ? findBinaries(path.join(dir, 'lib')) : { initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres'), libraryPath: null };
  const user = serverUser(dir);
  const data = path.join(dir, 'postgres');
  fs.mkdirSync(data, { mode: 0o700 });
  if (user) fs.chownSync(data, user.uid, user.gid);
  const env = { PATH: process.env.PATH, LC_ALL: 'C', TZ: 'UTC', ...(binaries.libraryPath ? { LD_LIBRARY_PATH: binaries.libraryPath } : {}) };
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  await new Promise<void>((resolve, reject) => {
    const init = spawn(binaries.initdb, ['-D', data, '-U', 'storeops', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'], {
      env,
      stdio: 'ignore',
      ...as,
    });
    init.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}`))));
  });
  const all = { listen_addresses: '', unix_socket_directories: data, port: '5432', ...settings };
  const child = spawn(binaries.postgres, ['-D', data, ...Object.entries(all).flatMap(([k, v]) => ['-c', `${k}=${v}`])], {
    env,
    stdio: 'ignore',
    detached: true,
    ...as,
  });
  const url = `postgresql://storeops@localhost/postgres?host=${encodeURIComponent(data)}`;
  for (let i = 0; ; i++) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('CREATE DATABASE storeops');
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => {});
      if (i > 600) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `postgresql://storeops@localhost/storeops?host=${encodeURIComponent(data)}`,
    stop: async () => {
      child.kill('SIGINT');
      await exited;
    },
  };
}

const world = makeBenchWorld({ locations: 50, lockersPerLocation: 4, cabinetsPerLocker: 24 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-ab-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
const provisionFile = path.join(dir, 'world.json');
fs.writeFileSync(provisionFile, JSON.stringify(world.file));
const secret = crypto.randomBytes(18).toString('base64url');
const sides: Side[] = [];
/** Run in reverse at the end: every service and database this tool started, even after a failure. */
const cleanups: (() => Promise<void>)[] = [];
log(
  `load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
);
try {
  for (const spec of specs) {
    const [name, kind] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
    const sideDir = path.join(dir, name);
    fs.mkdirSync(sideDir, { mode: 0o755 });
    let databaseUrl: string | null = null;
    if (kind.startsWith('url:')) {
      const db = await freshPostgres(kind.slice(4), 'storeops_ab');
      databaseUrl = db.url;
      cleanups.push(db.drop);
    } else if (kind.startsWith('server:') || kind.startsWith('server@')) {
      const bin = kind.startsWith('server@') ? kind.slice(7, kind.indexOf(':')) : null;
      const settings = Object.fromEntries(
        kind
          .slice(kind.indexOf(':') + 1)
          .split(';')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      const own = await ownServer(path.join(sideDir, 'server'), settings, bin);
      databaseUrl = own.url;
      cleanups.push(own.stop);
    } else if (kind !== 'embedded') {
      throw new Error(`unknown side ${spec}`);
    }
    const dataDir = path.join(sideDir, 'data');
    const server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
      DATA_DIR: dataDir,
      SECRET_TOKEN: secret,
      PROVISION_FILE: provisionFile,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    cleanups.push(() => server.stop());
    const seeded = await seed(server.url, world, secret, 2000, 3000);
    const readUrl = databaseUrl ?? embeddedUrl(dataDir);
    const session = await benchSession(server.url, readUrl, world);
    sides.push({
      name,
      server,
      readUrl,
      input: { url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session },
    });
    log(`${name}: ${kind}, seeded`);
  }
  interface Round {
    rps: number;
    p99: number;
    errors: number;
    cpu: CpuMs;
  }
  log(`\n${rounds} rounds of ${seconds} s, ${connections} connections; medians; CPU ms/req = service + database backends`);
  for (const scenario of scenarios.filter((s) => only.length === 0 || only.includes(s.name))) {
    await Promise.all(sides.map((s) => vacuum(s.readUrl)));
    const results = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
    for (let i = 0; i < rounds; i++) {
      // Each round in another order, so a trend in the machine's load favours no side.
      const order = sides.map((_, k) => sides[(k + i) % sides.length] as Side);
      for (const s of order) {
        const { loaded, cpu } = await measureCpu(s.server.pid, s.readUrl, () =>
          autocannon({ url: s.input.url, duration: seconds, connections, ...scenario.options(s.input) } as Options),
        );
        results.get(s.name)?.push({ rps: loaded.requests.average, p99: loaded.latency.p99, errors: loaded.errors + loaded.timeouts + loaded.non2xx, cpu });
      }
    }
    const base = median(results.get(sides[sides.length - 1]?.name ?? '')?.map((r) => r.rps) ?? [1]);
    for (const s of sides) {
      const rs = results.get(s.name) ?? [];
      const rps = median(rs.map((r) => r.rps));
      log(
        `${scenario.name.padEnd(32)} ${s.name.padEnd(12)} ${Math.round(rps)} req/s (${Math.round((rps / base - 1) * 100)}% of the last side; rounds ${rs.map((r) => Math.round(r.rps)).join(', ')}), ` +
          `p99 ${median(rs.map((r) => r.p99))} ms, CPU ${r3(median(rs.map((r) => r.cpu.server)))} + ${r3(median(rs.map((r) => r.cpu.database)))} ms/req, errors ${rs.reduce((n, r) => n + r.errors, 0)}`,
      );
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  fs.rmSync(dir, { recursive: true, force: true });
  log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  );
}
