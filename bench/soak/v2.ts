// npm run soak:v2 [-- --minutes 30] [-- --instances 2] [-- --out FILE (bench/out/soak-v2-TIME.json)]   (BENCH_DATABASE_URL required)
// Everything of version 2 at once, for a while, against two service instances sharing one fresh
// PostgreSQL database and a private Mosquitto (anonymous, scripts/lib/processes.ts): call
// buttons and hub updates, displays, CFH from every source with staff on the API and on the radio,
// timers shortened to seconds, signed webhooks to a local receiver plus a dead endpoint, SSE streams
// reopened every minute, R1/R2 announcements to edges that ack, lockers through their pickup
// lifecycle, reports and /metrics. Retention is shortened (RETENTION_TEST_SECONDS). Samples every
// 15 s (RSS and descriptors of each instance, database and table sizes, load average) go to a JSON
// file; the summary judges the second half: zero 5xx and zero unexpected answers, RSS and
// descriptors flat (least-squares slope under a threshold), retained tables flat.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.ts';
import { cleanupAll, startMosquitto, startService, tempDir, type Service } from '../../scripts/lib/processes.ts';
import { freshPostgres } from '../harness/database.ts';
import { setPassword, signIn } from '../harness/people.ts';
import { edgeDevice, keepStream, lockerDevice, webhookReceiver, type Edge, type Tally } from './devices.ts';
import { makeSoakWorld, type SoakLocation } from './world.ts';
import { runStaff, type Driver } from './load.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? String(args[args.indexOf(name) + 1]) : fallback);
const minutes = Number(arg('--minutes', '30'));
const instanceCount = Number(arg('--instances', '2'));
const out = path.resolve(arg('--out', `bench/out/soak-v2-${new Date().toISOString().slice(0, 16).replace(/:/g, '')}.json`));
fs.mkdirSync(path.dirname(out), { recursive: true }); // bench/out/ is gitignored: bench/RESULTS.md keeps the summary
const retentionSeconds = Number(arg('--retention-seconds', minutes >= 10 ? '300' : '60'));
const SAMPLE_MS = 15_000;
// Which speech engine the instances use: 'npm' hides Debian's Flite and Festival from them (PATH
// empty: nothing else in the service runs a program), so they speak with the default of a plain
// `npm ci`, Flite in WebAssembly in recycled worker threads; 'machine' lets them take the best the
// machine has.
const speech = arg('--speech', 'npm');
// Heap snapshots (SIGUSR2, written to the soak's temporary folder) at these minutes, e.g. "10,25".
const snapshotMinutes = arg('--heap-snapshots', '').split(',').filter(Boolean).map(Number);
const mallocArenaMax = arg('--malloc-arena-max', '2'); // npm start's default
const benchUrl = process.env.BENCH_DATABASE_URL;
if (!benchUrl) throw new Error('soak:v2 needs BENCH_DATABASE_URL (two instances share only PostgreSQL)');

const counts = new Map<string, number>();
const unexpected: { at: number; what: string; detail: string }[] = [];
const unexpectedBy = new Map<string, number>();
const started = Date.now();
const tally: Tally = {
  count: (what, n = 1) => counts.set(what, (counts.get(what) ?? 0) + n),
  unexpected: (what, detail) => {
    unexpectedBy.set(what, (unexpectedBy.get(what) ?? 0) + 1);
    if (unexpected.length < 200) unexpected.push({ at: Math.round((Date.now() - started) / 1000), what, detail });
    if ((unexpectedBy.get(what) ?? 0) <= 3) console.error(`UNEXPECTED ${what}: ${detail}`);
  },
};

function procSample(pid: number, probeFile: string): { rssMb: number; fds: number; probe?: Record<string, unknown> } {
  let probe: Record<string, unknown> | undefined;
  try {
    probe = JSON.parse(fs.readFileSync(probeFile, 'utf8')) as Record<string, unknown>;
  } catch {
    probe = undefined; // not written yet
  }
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024), fds: fs.readdirSync(`/proc/${pid}/fd`).length, probe };
  } catch {
    return { rssMb: 0, fds: 0, probe };
  }
}

function probeLine(p: Record<string, unknown> | undefined): string {
  if (p === undefined) return 'no probe';
  return `heap ${String(p.heapUsedMb)}/${String(p.heapTotalMb)}, ext ${String(p.externalMb)}, ab ${String(p.arrayBuffersMb)}, anon ${String(p.anonMb)}, thr ${String(p.threads)}`;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const RETAINED = [
  'device_outbox',
  'radio_audio',
  'webhook_deliveries',
  'webhook_attempts',
  'events',
  'jobs',
  'radio_heard',
  'radio_open_requests',
  'cfh_display_presses',
];
const KEPT = ['cfh_requests', 'cfh_request_events', 'locker_orders', 'radio_messages', 'radio_transcripts'];

async function main(): Promise<void> {
  const fresh = await freshPostgres(benchUrl as string, 'soak_v2');
  const db = new pg.Pool({ connectionString: fresh.url, max: 2 });
  const broker = await startMosquitto();
  const receiver = await webhookReceiver('', tally); // secret set below, once the world exists
  const deadPort = await freePort(); // nothing listens there
  const world = makeSoakWorld(receiver.url, `http://127.0.0.1:${deadPort}/dead`);
  await receiver.close();
  const hook = await webhookReceiver(world.webhookSecret, tally);
  (world.file.webhooks as { url: string }[])[0]!.url = hook.url;
  const dir = tempDir('soak-v2');
  const provision = path.join(dir, 'world.json');
  fs.writeFileSync(provision, JSON.stringify(world.file));
  const instances: Service[] = [];
  const devices: { endAsync: (force?: boolean) => Promise<unknown> }[] = [];
  const streams: { stop: () => void }[] = [];
  const samples: Record<string, unknown>[] = [];
  let sampler: NodeJS.Timeout | undefined;
  let vacuum: NodeJS.Timeout | undefined;
  let failed = false;
  try {
    // Kept after the run (the soak's own folder is removed), for a heap snapshot comparison.
    const snapshotDir = snapshotMinutes.length > 0 ? fs.mkdtempSync(path.join(os.tmpdir(), 'soak-v2-snapshots-')) : dir;
    const probeFile = (i: number) => path.join(dir, `probe-${i}.json`);
    const emptyPath = path.join(dir, 'no-programs');
    fs.mkdirSync(emptyPath);
    for (let i = 0; i < instanceCount; i++) {
      const port = await freePort();
      instances.push(
        await startService(`soak-${i}`, {
          NODE_OPTIONS: `--import ${path.resolve('bench/soak/probe.ts')} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}`,
          SOAK_PROBE_FILE: probeFile(i),
          ...(speech === 'npm' ? { PATH: emptyPath } : {}),
          ...(mallocArenaMax === '' ? {} : { MALLOC_ARENA_MAX: mallocArenaMax }),
          DATABASE_URL: fresh.url,
          MQTT_URL: broker.url,
          MQTT_CLIENT_ID: `storeops-soak-${i}`,
          SECRET_TOKEN: world.secret,
          PROVISION_FILE: provision,
          PORT: String(port),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          WEBHOOK_ALLOW_PRIVATE: 'true',
          RETENTION_TEST_SECONDS: String(retentionSeconds),
          RADIO_MESSAGE_TTL_SECONDS: '30',
          DEVICE_OFFLINE_SECONDS: '60',
          LOG_LEVEL: 'warn',
        }),
      );
    }
    console.log(
      `soak v2: ${minutes} min, ${instanceCount} instances (pids ${instances.map((s) => s.pid).join(', ')}), PostgreSQL ${new URL(fresh.url).pathname.slice(1)}, ` +
        `Mosquitto :${broker.port}, retention window ${retentionSeconds} s, speech ${speech}${mallocArenaMax === '' ? '' : `, MALLOC_ARENA_MAX=${mallocArenaMax}`}; samples every ${SAMPLE_MS / 1000} s into ${out}`,
    );
    for (const m of snapshotMinutes) {
      setTimeout(() => {
        for (const s of instances) process.kill(s.pid, 'SIGUSR2');
        console.log(`heap snapshots asked at minute ${m} into ${snapshotDir}`);
      }, m * 60_000).unref();
    }
    const edges = new Map<string, Edge>();
    const lockers = new Map<number, (key: number, command: string) => void>();
    for (const l of world.locations) {
      const edge = await edgeDevice(broker.url, l.edgeId, l.edgeKey, tally);
      edges.set(l.edgeId, edge);
      devices.push(edge.client);
      devices.push(await lockerDevice(broker.url, l.lockerId, l.lockerKey, tally, (k, c) => lockers.get(l.lockerId)?.(k, c)));
    }
    const driver: Driver = makeDriver(instances, tally);
    // The console's person signs in with a password (section 17), one session per instance, for the console stream.
    await setPassword(fresh.url, [world.person.email], world.person.password);
    const cookies: string[] = [];
    for (const s of instances) {
      const session = await signIn(s.url, world.person).catch((err: Error) => {
        tally.unexpected('console sign-in', err.message);
        return { cookie: '' };
      });
      cookies.push(session.cookie);
    }
    const recent: string[] = []; // message ids the C6 streams follow
    for (const [i, s] of instances.entries()) {
      for (const l of world.locations) {
        streams.push(
          keepStream(
            'C8',
            () => ({ url: `${s.url}/api/callforhelp/requests/stream?location_id=${l.id}`, headers: { authorization: `Bearer ${world.token}` } }),
            60_000,
            tally,
          ),
        );
        streams.push(
          keepStream('console', () => ({ url: `${s.url}/console/api/locations/${l.id}/stream`, headers: { cookie: cookies[i] as string } }), 75_000, tally),
        );
      }
      for (let k = 0; k < 3; k++) {
        streams.push(
          keepStream(
            'C6',
            () => {
              const id = recent[Math.floor(Math.random() * recent.length)];
              return id === undefined ? null : { url: `${s.url}/api/callforhelp/v1/tracking/stream?message_id=${encodeURIComponent(id)}`, headers: {} };
            },
            30_000,
            tally,
          ),
        );
      }
    }
    const sampleOnce = async () => {
      const t = Math.round((Date.now() - started) / 1000);
      const sizes =
        (
          await db.query<Record<string, string>>(
            `SELECT pg_database_size(current_database()) AS database, ${[...RETAINED, ...KEPT].map((x) => `pg_total_relation_size('${x}') AS ${x}`).join(', ')}`,
          )
        ).rows[0] ?? {};
      const kb = Object.fromEntries(Object.entries(sizes).map(([k, v]) => [k, Math.round(Number(v) / 1024)]));
      const retainedKb = RETAINED.reduce((a, x) => a + (kb[x] ?? 0), 0);
      const rows =
        (await db.query<Record<string, string>>(`SELECT ${[...RETAINED, ...KEPT].map((x) => `(SELECT count(*) FROM ${x}) AS ${x}`).join(', ')}`)).rows[0] ?? {};
      const s = {
        t,
        load: os.loadavg().map((x) => Math.round(x * 100) / 100),
        instances: instances.map((i, n) => ({ pid: i.pid, ...procSample(i.pid, probeFile(n)) })),
        databaseKb: kb.database,
        retainedKb,
        tablesKb: kb,
        rows: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, Number(v)])),
      };
      samples.push(s);
      console.log(
        `t=${t}s load ${s.load.join(' ')} ${s.instances.map((i, n) => `#${n} rss ${i.rssMb} MB (${probeLine(i.probe)}) fds ${i.fds}`).join(', ')}; db ${kb.database} KB, retained tables ${retainedKb} KB; unexpected ${unexpected.length}`,
      );
    };
    // Deleted rows' space is reused once vacuumed; a server with autovacuum off (this machine's) would
    // grow however well retention works, so the soak vacuums every minute as autovacuum's defaults do.
    const autovacuum = (await db.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]?.autovacuum;
    if (autovacuum !== 'on') {
      console.log(`the server's autovacuum is ${autovacuum}: the soak runs VACUUM every 60 s in its place`);
      vacuum = setInterval(() => void db.query('VACUUM').catch((err: Error) => tally.unexpected('vacuum', err.message)), 60_000);
    }
    await sampleOnce();
    // A sample the soak could not take (the shared server out of connections, say) is the soak's own
    // miss, not an answer of the service: counted and logged, the next one 15 s later.
    sampler = setInterval(
      () =>
        void sampleOnce().catch((err: Error) => {
          tally.count('sample missed');
          console.error(`sample missed: ${err.message}`);
        }),
      SAMPLE_MS,
    );
    const deadline = started + minutes * 60_000;
    await runStaff(driver, world, { deadline, edges, lockers, recent, tally });
    clearInterval(sampler);
    await sampleOnce();
    for (const s of streams) s.stop();
    // The instances' own view: requests by operation and status from /metrics.
    const metrics: Record<string, number> = {};
    for (const s of instances) {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      for (const m of text.matchAll(/^storeops_http_requests_total\{([^}]*)\} (\d+)/gm)) {
        const labels = Object.fromEntries([...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
        const k = `${labels.operation ?? labels.route ?? '?'} ${labels.status ?? labels.status_code ?? '?'}`;
        metrics[k] = (metrics[k] ?? 0) + Number(m[2]);
      }
    }
    const fiveXx = Object.entries(metrics).filter(([k]) => / 5\d\d$/.test(k));
    // Judged over the second half.
    const half = samples.filter((s) => (s.t as number) >= (minutes * 60) / 2);
    type InstanceSample = { rssMb: number; fds: number; probe?: Record<string, number> };
    const perInstance = instances.map((_, n) => {
      const at = (s: Record<string, unknown>) => (s.instances as InstanceSample[])[n]!;
      const pts = (f: (x: InstanceSample) => number | undefined) =>
        half.flatMap((s) => {
          const y = f(at(s));
          return y === undefined || Number.isNaN(y) ? [] : [[(s.t as number) / 60, y] as [number, number]];
        });
      const all = samples.map(at);
      const meanRss = pts((x) => x.rssMb).reduce((a, [, y]) => a + y, 0) / Math.max(1, half.length);
      const round = (x: number) => Math.round(x * 100) / 100;
      // The collector's swing (heapTotal grows and shrinks by 100 MB and more under bursts) moves RSS
      // far more than a leak of a few MB: the floor (the lowest sample of each 2-minute window, the
      // heap just after a full collection) and the native part (anonymous RSS less V8's heap) say
      // whether anything accumulates.
      const floor = (points: [number, number][]) => {
        const windows = new Map<number, [number, number]>();
        for (const [x, y] of points) {
          const w = Math.floor(x / 2);
          const cur = windows.get(w);
          if (cur === undefined || y < cur[1]) windows.set(w, [x, y]);
        }
        return [...windows.values()];
      };
      const heapUsed = pts((x) => x.probe?.heapUsedMb);
      const native = pts((x) => (x.probe === undefined ? undefined : (x.probe.anonMb ?? NaN) - (x.probe.heapTotalMb ?? NaN)));
      return {
        rssStartMb: all[0]?.rssMb,
        rssEndMb: all.at(-1)?.rssMb,
        rssMaxMb: Math.max(...all.map((x) => x.rssMb)),
        rssMeanSecondHalfMb: Math.round(meanRss),
        rssSlopeMbPerMin: round(slope(pts((x) => x.rssMb))),
        rssFloorSlopeMbPerMin: round(slope(floor(pts((x) => x.rssMb)))),
        heapUsedFloorSlopeMbPerMin: round(slope(floor(heapUsed))),
        heapUsedFloorMb: floor(heapUsed).map(([, y]) => y),
        heapTotalMeanSecondHalfMb: Math.round(pts((x) => x.probe?.heapTotalMb).reduce((a, [, y]) => a + y, 0) / Math.max(1, half.length)),
        nativeMeanSecondHalfMb: Math.round(native.reduce((a, [, y]) => a + y, 0) / Math.max(1, native.length)),
        nativeSlopeMbPerMin: round(slope(native)),
        fdsStart: all[0]?.fds,
        fdsEnd: all.at(-1)?.fds,
        fdsMax: Math.max(...all.map((x) => x.fds)),
        fdsSlopePerMin: round(slope(pts((x) => x.fds))),
      };
    });
    const afterWindow = samples.filter((s) => (s.t as number) >= Math.max(retentionSeconds * 2, (minutes * 60) / 2));
    const retainedSlope = slope(afterWindow.map((s) => [(s.t as number) / 60, s.retainedKb as number]));
    const databaseSlope = slope(afterWindow.map((s) => [(s.t as number) / 60, s.databaseKb as number]));
    const meanRetained = afterWindow.reduce((a, s) => a + (s.retainedKb as number), 0) / Math.max(1, afterWindow.length);
    // Thresholds (docs/performance.md, Soak): a leak of 1 MB/min is 1.4 GB a day; 0.5 descriptors/min
    // is 720 a day; retained tables may grow 1% of their size per minute at most (noise of autovacuum).
    const verdicts = {
      zero5xx: fiveXx.length === 0,
      zeroUnexpected: unexpected.length === 0,
      rssFlat: perInstance.every((p) => p.rssSlopeMbPerMin < 1),
      rssFloorFlat: perInstance.every((p) => p.rssFloorSlopeMbPerMin < 1),
      heapFloorFlat: perInstance.every((p) => p.heapUsedFloorSlopeMbPerMin < 0.5),
      nativeFlat: perInstance.every((p) => p.nativeSlopeMbPerMin < 1),
      fdsFlat: perInstance.every((p) => p.fdsSlopePerMin < 0.5),
      retainedFlat: retainedSlope < meanRetained * 0.01,
    };
    failed = Object.values(verdicts).some((v) => !v);
    const summary = {
      date: new Date(started).toISOString(),
      minutes,
      autovacuum,
      instances: instanceCount,
      retentionSeconds,
      machine: `${os.cpus().length} × ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GB`,
      loadAtEnd: os.loadavg(),
      perInstance,
      retainedSlopeKbPerMin: Math.round(retainedSlope),
      databaseSlopeKbPerMinAfterWindow: Math.round(databaseSlope),
      meanRetainedKbAfterWindow: Math.round(meanRetained),
      counts: Object.fromEntries([...counts].sort()),
      metrics,
      fiveXx,
      unexpectedBy: Object.fromEntries(unexpectedBy),
      unexpected,
      verdicts,
    };
    fs.writeFileSync(out, JSON.stringify({ summary, samples }, null, 1));
    console.log(JSON.stringify({ ...summary, unexpected: unexpected.slice(0, 20), metrics: undefined }, null, 1));
    console.log(failed ? 'SOAK FAILED' : 'SOAK PASSED');
  } finally {
    clearInterval(sampler);
    clearInterval(vacuum);
    for (const s of streams) s.stop();
    for (const c of devices) await c.endAsync(true).catch(() => null);
    for (const s of instances) await s.stop().catch(() => null);
    await hook.close();
    await cleanupAll();
    await db.end();
    await fresh.drop();
  }
  process.exit(failed ? 1 : 0);
}

/** What the messaging provider sends with an inbound message (its contract, section 2): base64 of
 * HMAC-SHA1 keyed with the account's auth token, over the full URL then each form field sorted by
 * name, name then value. The bench signs as the provider does; it does not borrow the service's check. */
function providerSignature(authToken: string, url: string, form: Record<string, string>): string {
  const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  let content = url;
  for (const name of Object.keys(form).sort(byCodeUnit)) content += name + form[name];
  return crypto.createHmac('sha1', authToken).update(content, 'utf8').digest('base64');
}

function makeDriver(instances: Service[], t: Tally): Driver {
  let next = 0;
  return {
    async call(op, method, url, opts = {}) {
      const s = opts.instance ?? (instances[next++ % instances.length] as Service);
      const headers: Record<string, string> = { ...opts.headers };
      let body: string | undefined;
      if (opts.form !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(opts.form).toString();
        headers['x-messaging-signature'] = providerSignature(opts.signWith as string, `${s.url}${url}`, opts.form);
      } else if (opts.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(opts.body);
      }
      try {
        const res = await fetch(`${s.url}${url}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        t.count(`${op} ${res.status}`);
        const ok = (opts.expect ?? [200, 201]).includes(res.status);
        if (!ok) t.unexpected(`${op} ${res.status}`, text.slice(0, 300));
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = { text };
        }
        return { status: res.status, json, ok };
      } catch (err) {
        t.count(`${op} error`);
        t.unexpected(`${op} error`, (err as Error).message);
        return { status: 0, json: {}, ok: false };
      }
    },
    instances: instances.length,
  };
}

export type { SoakLocation };
await main();
