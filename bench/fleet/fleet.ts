// npm run bench:fleet -- --devices N --broker embedded|mosquitto [--rate R (20 L3 a second)] [--seconds S (10)] [--json]
// A chain's fleet on one instance: N simulated devices (nine lockers in ten, the rest radio edge
// devices), real mqtt.js clients as the simulators use, connected to the service's embedded broker
// or, separately, through a Mosquitto of its own (the external-broker mode). Reports connect time,
// the service's RSS, its CPU in the 20 s after the connect and then idle (30 s), both by 5 s
// windows and idle per 1,000 devices, command delivery from L3 to the locker under a steady
// command load (p50/p99), and the first commands after every device reconnects at once
// (one locker in ten then has a command it never acked, so redelivery has work to do).
// With --json the last stdout line is one JSON object. BENCH_DATABASE_URL: that PostgreSQL instead of the
// service's embedded PostgreSQL server.
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import mqtt, { MqttClient } from 'mqtt';
import { freePort } from '../../scripts/lib/free-port.ts';
import { cpuMsOfPid } from '../harness/cpu.ts';
import { serviceNodeFlags, startServer } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const total = Number(option('devices', '1000'));
const brokerKind = option('broker', 'embedded');
const rate = Number(option('rate', '20'));
const seconds = Number(option('seconds', '10'));
const asJson = args.includes('--json');
if (!Number.isInteger(total) || total < 10 || !['embedded', 'mosquitto'].includes(brokerKind)) {
  console.error('usage: node bench/fleet/fleet.ts --devices N (>= 10) --broker embedded|mosquitto [--rate R] [--seconds S] [--json]');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '../..');
const log = (line: string) => (asJson ? process.stderr : process.stdout).write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuOf = (pid: number) => cpuMsOfPid(pid) ?? 0;
const pct = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number));
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

// The world: lockers with two cabinets each, and edge devices, provisioned from the service's file.
const lockerCount = Math.round(total * 0.9);
const edgeCount = total - lockerCount;
const world = makeBenchWorld({ locations: Math.ceil(lockerCount / 20), lockersPerLocation: 20, cabinetsPerLocker: 2 });
const lockers = world.lockers.slice(0, lockerCount);
const file = world.file as { lockers: unknown[]; radio_edges: unknown[] };
file.lockers = file.lockers.slice(0, lockerCount);
const edges = Array.from({ length: edgeCount }, (_, i) => ({
  edgeId: `fleet-edge-${i + 1}`,
  key: `fleet-edge-${crypto.randomBytes(12).toString('hex')}`,
  locationId: world.locations[i % world.locations.length] as number,
}));
file.radio_edges = edges.map((e) => ({ edge_id: e.edgeId, location_id: e.locationId, name: e.edgeId, device_key: e.key, voice_handlers: [] }));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-fleet-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
fs.writeFileSync(path.join(dir, 'world.json'), JSON.stringify(world.file));
const secret = crypto.randomBytes(18).toString('base64url');

/** A Mosquitto of our own on a free port, anonymous (devices' credentials are sent and ignored). */
async function startMosquitto(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const conf = path.join(dir, 'mosquitto.conf');
  fs.writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 1000\nlog_type error\n`);
  const child: ChildProcess = spawn('/usr/sbin/mosquitto', ['-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 1_000 });
      c.once('connect', () => {
        c.end(true);
        resolve(true);
      });
      c.once('error', () => {
        c.end(true);
        resolve(false);
      });
      c.once('close', () => resolve(false));
    });
    if (ok) break;
    await sleep(100);
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    pid: child.pid as number,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface Device {
  lockerId?: number;
  /** The store's own address (each store is behind one NAT address; the broker caps logins per address). */
  address: string;
  username: string;
  password: string;
  inbox: string;
  ackTopic: string;
  idField: 'command_id' | 'message_id';
  /** false: receives and never acks (its commands stay unacked, for redelivery). */
  acks: boolean;
  client: MqttClient | null;
}

/** The L3 waiting for each locker (at most one at a time): when it was sent, and whom to tell. */
const pending = new Map<number, { sentAt: number; arrived: (ms: number) => void }>();
/** Messages no L3 waited for: redelivered copies, and edge devices' plays. */
let unawaited = 0;

function connect(device: Device, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const client = new MqttClient(() => net.createConnection({ host: hostname, port: Number(port), localAddress: device.address }), {
      username: device.username,
      password: device.password,
      clientId: `${device.username.replace(':', '-')}-fleet`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
      keepalive: 60,
      protocolVersion: 4,
    });
    device.client = client;
    client.on('message', (_topic, payload) => {
      const body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      const id = String(body[device.idField]);
      const wait = device.lockerId === undefined ? undefined : pending.get(device.lockerId);
      if (wait !== undefined && device.lockerId !== undefined) {
        pending.delete(device.lockerId);
        wait.arrived(performance.now() - wait.sentAt);
      } else {
        unawaited++;
      }
      if (device.acks) client.publish(device.ackTopic, JSON.stringify({ [device.idField]: id, status: 'ok' }), { qos: 1 });
    });
    client.once('connect', () => client.subscribe(device.inbox, { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    client.once('error', reject);
    client.on('error', () => {}); // after the connect, an error shows as a command that does not arrive
  });
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** L3 on the locker's first cabinet; resolves with the ms from the request to the locker receiving it. */
async function command(serverUrl: string, lockerIndex: number, n: number): Promise<number> {
  const locker = lockers[lockerIndex] as (typeof lockers)[number];
  const cabinet = locker.cabinets[0] as { id: number };
  const sentAt = performance.now();
  // Waiting before the request: the command can reach the locker before L3's answer reaches us.
  const arrival = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`locker ${locker.id} did not receive its command within 30 s`)), 30_000);
    pending.set(locker.id, {
      sentAt,
      arrived: (ms) => {
        clearTimeout(timer);
        resolve(ms);
      },
    });
  });
  arrival.catch(() => {});
  const res = await fetch(`${serverUrl}/api/lockers/cabinets/${cabinet.id}?secret_token=${secret}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command: n % 2 === 0 ? 'close' : 'open' }),
  });
  const text = await res.text();
  if (res.status !== 200) {
    pending.delete(locker.id);
    throw new Error(`L3 answered ${res.status}: ${text.slice(0, 200)}`);
  }
  // L3 does not answer the command_id: the locker's next command that nobody else waits for is
  // this one (a copy redelivered just then would count, and be early: rare, and only faster).
  return arrival;
}

/** A process's CPU over `seconds`, in all and by windows, as a percent of one core. */
async function cpuWindows(pid: number, seconds: number, windowSeconds: number): Promise<{ percent: number; byWindow: number[] }> {
  const start = cpuOf(pid);
  const byWindow: number[] = [];
  for (let w = 0, before = start; w < seconds / windowSeconds; w++) {
    await sleep(windowSeconds * 1000);
    const now = cpuOf(pid);
    byWindow.push(((now - before) / 1000 / windowSeconds) * 100);
    before = now;
  }
  return { percent: ((cpuOf(pid) - start) / 1000 / seconds) * 100, byWindow };
}

const mosquitto = brokerKind === 'mosquitto' ? await startMosquitto() : null;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? null;
log(
  `fleet: ${lockerCount} lockers + ${edgeCount} edge devices, ${brokerKind} broker, ${databaseUrl === null ? 'embedded PostgreSQL' : 'PostgreSQL'}; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const server = await startServer(root, [...serviceNodeFlags(root), 'src/main.ts'], {
  DATA_DIR: path.join(dir, 'data'),
  SECRET_TOKEN: secret,
  PROVISION_FILE: path.join(dir, 'world.json'),
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : {}),
  ...(mosquitto !== null ? { MQTT_URL: mosquitto.url, MQTT_CLIENT_ID: 'storeops-fleet' } : {}),
});
const deviceUrl = mosquitto?.url ?? `mqtt://127.0.0.1:${server.mqttPort}`;
const storeAddress = (locationId: number) => {
  const n = world.locations.indexOf(locationId) + 2;
  return `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;
};
const devices: Device[] = [
  ...lockers.map((l) => ({
    address: storeAddress(l.locationId),
    username: `locker:${l.id}`,
    password: l.apiKey,
    inbox: `lockers/${l.id}/commands`,
    ackTopic: `lockers/${l.id}/acks`,
    idField: 'command_id' as const,
    acks: true,
    client: null,
    lockerId: l.id,
  })),
  ...edges.map((e) => ({
    address: storeAddress(e.locationId),
    username: `edge:${e.edgeId}`,
    password: e.key,
    inbox: `radio/${e.edgeId}/play`,
    ackTopic: `radio/${e.edgeId}/played`,
    idField: 'message_id' as const,
    acks: true,
    client: null,
  })),
];

try {
  const baseRssMb = server.rssKb() / 1024;
  const connectStarted = performance.now();
  await pool(devices, 200, (d) => connect(d, deviceUrl));
  const connectSeconds = (performance.now() - connectStarted) / 1000;
  log(`connected ${total} devices in ${connectSeconds.toFixed(1)} s`);

  await sleep(3_000);
  const connectedRssMb = server.rssKb() / 1024;
  // After the connect burst, the service still collects its garbage: V8's memory reducer runs a
  // few full collections once allocation has stopped for a while (200-260 ms each on the embedded
  // database's bigger heap, 8-12 s after the burst). That is the connect's cost, measured on its
  // own for 20 s; idle is what follows: every device connected, nothing to send, 30 s.
  const windowSeconds = 5;
  const afterConnectSeconds = 20;
  const afterConnect = await cpuWindows(server.pid, afterConnectSeconds, windowSeconds);
  const idleSeconds = 30;
  const broker0 = mosquitto === null ? 0 : cpuOf(mosquitto.pid);
  const idle = await cpuWindows(server.pid, idleSeconds, windowSeconds);
  const idleCpuPercent = idle.percent;
  const idleWindows = idle.byWindow;
  const brokerIdleCpuPercent = mosquitto === null ? null : ((cpuOf(mosquitto.pid) - broker0) / 1000 / idleSeconds) * 100;
  log(
    `after the connect: CPU ${afterConnect.percent.toFixed(1)}% over ${afterConnectSeconds} s (by ${windowSeconds} s: ${afterConnect.byWindow.map((p) => p.toFixed(1)).join(', ')})`,
  );
  log(
    `idle: service RSS ${connectedRssMb.toFixed(0)} MB (${baseRssMb.toFixed(0)} MB before devices), CPU ${idleCpuPercent.toFixed(1)}% over ${idleSeconds} s (by ${windowSeconds} s: ${idleWindows.map((p) => p.toFixed(1)).join(', ')})`,
  );

  // Steady load: `rate` L3 commands a second to random lockers, for `seconds`.
  const latencies: number[] = [];
  let errors = 0;
  const inFlight: Promise<void>[] = [];
  const loadStarted = performance.now();
  const busy = new Set<number>();
  for (let n = 0; n < rate * seconds; n++) {
    const due = loadStarted + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    let index = Math.floor(Math.random() * lockers.length);
    while (busy.has(index)) index = (index + 1) % lockers.length;
    busy.add(index);
    inFlight.push(
      command(server.url, index, n)
        .then(
          (ms) => void latencies.push(ms),
          () => void errors++,
        )
        .finally(() => busy.delete(index)),
    );
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  log(
    `delivery: ${latencies.length} commands at ${rate}/s, p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, errors ${errors}`,
  );

  // Mass reconnect: one locker in ten holds a command it never acked; every device drops and
  // comes back at once; then commands go to lockers chosen at random.
  const deaf = devices.filter((d, i) => d.lockerId !== undefined && i % 10 === 0);
  for (const d of deaf) d.acks = false;
  await Promise.all(
    deaf.map((d) =>
      command(
        server.url,
        lockers.findIndex((l) => l.id === d.lockerId),
        1,
      ).catch(() => void errors++),
    ),
  );
  for (const d of devices) d.client?.end(true);
  await sleep(2_000);
  for (const d of deaf) d.acks = true;
  const reconnectStarted = performance.now();
  // Copies redelivered now are not commands anyone waits for: the deaf lockers' pending L3s are done.
  const afterStarted = unawaited;
  // While they come back: every 100 ms a command to a locker that is back (and had nothing unacked).
  const back: number[] = [];
  const during: number[] = [];
  const duringWork: Promise<void>[] = [];
  let reconnecting = true;
  const probe = (async () => {
    for (let n = 0; reconnecting; n++) {
      await sleep(100);
      const index = back.find((i) => i % 10 === 5);
      if (index === undefined) continue;
      back.splice(back.indexOf(index), 1);
      duringWork.push(
        command(server.url, index, n).then(
          (ms) => void during.push(ms),
          () => void errors++,
        ),
      );
    }
  })();
  await pool(
    devices.map((d, i) => ({ d, i })),
    500,
    ({ d, i }) => connect(d, deviceUrl).then(() => void (d.lockerId !== undefined && back.push(i))),
  );
  const reconnectSeconds = (performance.now() - reconnectStarted) / 1000;
  reconnecting = false;
  await probe;
  await Promise.all(duringWork);
  during.sort((a, b) => a - b);
  log(`during the reconnect: ${during.length} commands, p50 ${pct(during, 50).toFixed(0)} ms, slowest ${(during.at(-1) ?? 0).toFixed(0)} ms`);
  const after: number[] = [];
  const firstStarted = performance.now();
  // Lockers that had nothing unacked (the deaf ones are i % 10 === 0), spread over the chain.
  const targets = Math.min(20, Math.floor(lockers.length / 10));
  const spacing = Math.floor(lockers.length / targets / 10) * 10;
  await Promise.all(
    Array.from({ length: targets }, (_, k) =>
      command(server.url, k * spacing + 5, k).then(
        (ms) => void after.push(ms),
        (err: unknown) => {
          errors++;
          log(String(err));
        },
      ),
    ),
  );
  after.sort((a, b) => a - b);
  log(
    `reconnect: all ${total} back in ${reconnectSeconds.toFixed(1)} s; the next ${targets} commands: first ${(after[0] ?? 0).toFixed(0)} ms, slowest ${(after.at(-1) ?? 0).toFixed(0)} ms (all answered in ${(performance.now() - firstStarted).toFixed(0)} ms)`,
  );

  const per1000 = 1000 / total;
  const result = {
    devices: total,
    lockers: lockerCount,
    edges: edgeCount,
    broker: brokerKind,
    database: databaseUrl === null ? 'embedded postgresql' : 'postgresql',
    connect: { seconds: round(connectSeconds, 2), perSecond: Math.round(total / connectSeconds) },
    rssMb: { beforeDevices: round(baseRssMb), connected: round(connectedRssMb), perThousandDevices: round((connectedRssMb - baseRssMb) * per1000) },
    afterConnectCpuPercent: { service: round(afterConnect.percent, 2), seconds: afterConnectSeconds, byWindow: afterConnect.byWindow.map((p) => round(p, 2)) },
    // Idle begins this long after the last device connected (session 8's figures: 3 s).
    idleCpuPercent: {
      startsAfterConnectSeconds: 3 + afterConnectSeconds,
      service: round(idleCpuPercent, 2),
      perThousandDevices: round(idleCpuPercent * per1000, 2),
      broker: brokerIdleCpuPercent === null ? null : round(brokerIdleCpuPercent, 2),
      seconds: idleSeconds,
      byWindow: idleWindows.map((p) => round(p, 2)),
    },
    delivery: {
      rate,
      seconds,
      commands: latencies.length,
      p50Ms: round(pct(latencies, 50)),
      p99Ms: round(pct(latencies, 99)),
      maxMs: round(latencies.at(-1) ?? 0),
      errors,
    },
    reconnect: {
      seconds: round(reconnectSeconds, 2),
      unackedLockers: deaf.length,
      redeliveredSoFar: unawaited - afterStarted,
      // The commands sent the moment the last device is back: the slowest is the figure to hold to 500 ms.
      duringReconnect: { commands: during.length, p50Ms: round(pct(during, 50)), maxMs: round(during.at(-1) ?? 0) },
      firstCommands: after.length,
      firstCommandMs: round(after.at(-1) ?? 0),
      firstCommandP50Ms: round(pct(after, 50)),
    },
    load: os.loadavg().map((l) => round(l, 2)),
    uptime: execSync('uptime').toString().trim(),
    date: new Date().toISOString(),
    cpus: os.cpus().length,
  };
  if (asJson) console.log(JSON.stringify(result));
  else console.log(JSON.stringify(result, null, 2));
} finally {
  for (const d of devices) d.client?.end(true);
  await server.stop();
  await mosquitto?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
