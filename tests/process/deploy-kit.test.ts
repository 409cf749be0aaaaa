// The operator's kit (Dockerfile, deploy/), checked without a container engine: each file runs what
// `npm start` runs and sets only variables the service reads, the image's runtime imports are all
// production dependencies, the unit passes systemd-analyze, the broker's accounts give each device
// its own topics only (a real Mosquitto), and the API document carries the package's version.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { isBuiltin } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import mqtt from 'mqtt';
import { parse as parseYaml } from 'yaml';
import { openApiOptions } from '../../src/http/openapi.ts';
import { mosquittoBinary, userIds } from '../../scripts/lib/processes.ts';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; scripts: Record<string, string>; dependencies: Record<string, string> };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** npm start's variables (`NAME=${NAME:-default}`) and node's arguments, from package.json. */
function startScript(): { env: Map<string, string>; args: string[] } {
  const m = /^((?:\w+=\S+\s+)*)exec node (.+)$/.exec(pkg.scripts.start ?? '');
  assert.ok(m, `package.json start is "<VAR=value ...> exec node <args>": ${pkg.scripts.start}`);
  const env = new Map([...(m[1] ?? '').matchAll(/(\w+)=\$\{\w+:-([^}]*)\}/g)].map((v) => [v[1] ?? '', v[2] ?? '']));
  return { env, args: (m[2] ?? '').trim().split(/\s+/) };
}

/** Every variable the service reads: the names src/config.ts quotes, and those npm start sets. */
const serviceVariables = new Set([...[...read('src/config.ts').matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]), ...startScript().env.keys()]);

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function dockerfile(): { op: string; rest: string }[] {
  return read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.trim().split(/\s+/);
      return { op: op.toUpperCase(), rest: rest.join(' ') };
    });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

test('the image runs what npm start runs, as a non-root user, production dependencies only, data in a volume', () => {
  const lines = dockerfile();
  const one = (op: string) => lines.filter((l) => l.op === op).at(-1)?.rest ?? '';
  const { env, args } = startScript();
  assert.match(lines[0]?.rest ?? '', /^node:24-[a-z]+-slim$/, 'an official node:24 Debian slim image');
  assert.ok(lines.some((l) => l.op === 'RUN' && /npm ci --omit=dev\b/.test(l.rest)));
  const workdir = one('WORKDIR');
  assert.deepEqual(JSON.parse(one('CMD')), [`${workdir}/node_modules/node/bin/node`, ...args]);
  const envs = new Map(lines.filter((l) => l.op === 'ENV').flatMap((l) => [...l.rest.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));
  for (const [name, value] of env) assert.equal(envs.get(name), value, `ENV ${name} as npm start sets it`);
  for (const name of envs.keys()) assert.ok(serviceVariables.has(name ?? ''), `ENV ${name} is read by the service`);
  assert.ok(
    one('VOLUME')
      .split(/\s+/)
      .includes(envs.get('DATA_DIR') ?? '?'),
    'DATA_DIR is the volume',
  );
  assert.ok(!['', 'root', '0'].includes(one('USER')), 'runs as a non-root user');
  assert.deepEqual(one('EXPOSE').split(/\s+/).sort(), ['1883', '3000']);
  // The build context holds what the Dockerfile copies, not node_modules, data or .git.
  const ignore = read('.dockerignore');
  assert.match(ignore, /^\*$/m);
  for (const copied of lines.filter((l) => l.op === 'COPY').flatMap((l) => l.rest.split(/\s+/).slice(0, -1))) {
    assert.match(ignore, new RegExp(`^!${copied.replace(/\/$/, '')}/?$`, 'm'), `${copied} is in the build context`);
  }
});

test("the image's HEALTHCHECK passes on /readyz 200 and fails on 503 or no answer", async (t) => {
  const hc = dockerfile().find((l) => l.op === 'HEALTHCHECK')?.rest ?? '';
  const argv = JSON.parse(hc.slice(hc.indexOf(' CMD ') + 5)) as string[];
  assert.match(argv[0] ?? '', /node_modules\/node\/bin\/node$/);
  const asked: string[] = [];
  const serve = async (status: number) => {
    const server = http.createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(status).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    return (server.address() as AddressInfo).port;
  };
  const check = (port: number) =>
    new Promise<number | null>((resolve) => {
      spawn(process.execPath, argv.slice(1), { env: { PORT: String(port) }, stdio: 'ignore' }).on('exit', resolve);
    });
  const ports = [await serve(200), await serve(503), await freePort()];
  assert.deepEqual(await Promise.all(ports.map(check)), [0, 1, 1]);
  assert.deepEqual(asked, ['/readyz', '/readyz']);
});

test('every runtime import of src/ is a production dependency (the image omits devDependencies)', () => {
  const files = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  const patterns = [
    /^\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'/gm, // `import { type A } from` stays at run time
    /^\s*import\s+'([^']+)'/gm,
    /\bimport\(\s*'([^']+)'\s*\)/g,
    /(?:import\.meta|createRequire\([^)]*\))\.resolve\(\s*'([^']+)'/g,
  ];
  const packages = new Map<string, string>();
  for (const file of files(path.join(root, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const spec of patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1] ?? ''))) {
      if (spec.startsWith('.') || isBuiltin(spec)) continue;
      packages.set(
        spec
          .split('/')
          .slice(0, spec.startsWith('@') ? 2 : 1)
          .join('/'),
        path.relative(root, file),
      );
    }
  }
  assert.ok(packages.has('fastify') && packages.has('mqtt'), 'the scan finds the imports');
  for (const [name, file] of packages) assert.ok(name in pkg.dependencies, `${name} (${file}) is in "dependencies"`);
});

test('compose: PostgreSQL 18, Mosquitto 2, two instances behind the proxy, every variable defined and read', () => {
  const text = read('deploy/compose.yaml');
  const doc = parseYaml(text, { merge: true }) as Json;
  const services = doc.services as Json;
  assert.match(services.db.image, /^postgres:18\b/);
  assert.match(services.broker.image, /^eclipse-mosquitto:2\b/);
  const instances = Object.keys(services).filter((name) => services[name].image === 'storeops:local');
  assert.deepEqual(instances, ['storeops-1', 'storeops-2']);
  const env = instances.map((name) => services[name].environment as Record<string, string>);
  for (const name of ['SECRET_TOKEN', 'DATABASE_URL', 'MQTT_URL', 'PUBLIC_BASE_URL']) {
    assert.ok(env[0]?.[name], `${name} set`);
    assert.equal(env[0]?.[name], env[1]?.[name], `${name} the same for both`);
  }
  assert.notEqual(env[0]?.MQTT_CLIENT_ID, env[1]?.MQTT_CLIENT_ID);
  for (const name of instances) {
    assert.ok(Number(/^(\d+)s$/.exec(services[name].stop_grace_period)?.[1]) * 1000 > gracefulStopMs(), `${name} is given its graceful stop`);
  }
  for (const name of Object.keys({ ...env[0], ...env[1] })) assert.ok(serviceVariables.has(name), `${name} is read by src/config.ts`);

  const used = new Set([...text.matchAll(/(?<!\$)\$\{([A-Z0-9_]+)(?::?[-?][^}]*)?\}/g)].map((m) => m[1]));
  const defined = new Set([...read('deploy/.env.example').matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]));
  assert.deepEqual([...used].sort(), [...defined].sort(), 'compose uses exactly what .env.example defines');

  // The proxy balances over the instances and asks /readyz; the broker's accounts are the service's.
  const caddy = read('deploy/Caddyfile');
  assert.match(caddy, new RegExp(`reverse_proxy ${instances.map((i) => `${i}:3000`).join(' ')} \\{`));
  assert.match(caddy, /^\s*health_uri \/readyz$/m);
  const accounts = services['broker-accounts'].command as string[];
  const [, user, password] = /^mqtt:\/\/(\w+):(\$\{MQTT_PASSWORD[^}]*\})@broker:1883$/.exec(env[0]?.MQTT_URL ?? '') ?? [];
  assert.deepEqual(accounts.slice(2), ['service', user, password]);
});

/** The unit's `Key=value` lines, by key. */
function unit(): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const m of read('deploy/storeops.service').matchAll(/^(\w+)=(.*)$/gm)) keys.set(m[1] ?? '', [...(keys.get(m[1] ?? '') ?? []), m[2] ?? '']);
  return keys;
}

/** How long main.ts lets a graceful stop take before it exits anyway. */
function gracefulStopMs(): number {
  const ms = Number(/shutdown took too long[\s\S]*?\}, ([\d_]+)\)/.exec(read('src/main.ts'))?.[1]?.replace(/_/g, ''));
  assert.ok(ms > 0, "main.ts's graceful stop bound is found");
  return ms;
}

test('the systemd unit runs what npm start runs, non-root, sandboxed with DATA_DIR writable, and outlasts the graceful stop', () => {
  const keys = unit();
  const one = (key: string) => keys.get(key)?.at(-1) ?? '';
  const { env, args } = startScript();
  assert.equal(one('ExecStart'), [`${one('WorkingDirectory')}/node_modules/node/bin/node`, ...args].join(' '));
  const set = new Map((keys.get('Environment') ?? []).map((e) => e.split('=') as [string, string]));
  for (const [name, value] of env) assert.equal(set.get(name), value, `Environment=${name} as npm start sets it`);
  for (const name of set.keys()) assert.ok(serviceVariables.has(name), `${name} is read by the service`);
  assert.equal(one('EnvironmentFile'), '/etc/storeops/env');
  assert.ok(!['', 'root', '0'].includes(one('User')));
  assert.equal(one('ProtectSystem'), 'strict');
  assert.ok(
    one('ReadWritePaths')
      .split(/\s+/)
      .includes(set.get('DATA_DIR') ?? '?'),
    'DATA_DIR is writable',
  );
  for (const key of ['NoNewPrivileges', 'PrivateTmp']) assert.equal(one(key), 'yes', key);
  assert.equal(one('Restart'), 'on-failure');
  assert.equal(one('KillSignal'), 'SIGTERM');
  const graceMs = gracefulStopMs();
  assert.ok(Number(/^(\d+)s$/.exec(one('TimeoutStopSec'))?.[1]) * 1000 > graceMs, `TimeoutStopSec is longer than ${graceMs} ms`);
});

test('systemd-analyze verify accepts the unit (its paths pointed at this checkout)', (t) => {
  if (spawnSync('systemd-analyze', ['--version']).error) return t.skip('systemd-analyze is not installed');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-unit-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const copy = path.join(dir, 'storeops.service');
  fs.writeFileSync(copy, read('deploy/storeops.service').replaceAll('/opt/storeops', root));
  const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
  // An unknown key is only a warning (status 0): any output is a finding.
  assert.equal(`${result.status} ${result.stdout}${result.stderr}`.trim(), '0');
});

test("the OpenAPI document and docs/openapi.json carry package.json's version, which CHANGELOG.md describes", () => {
  const options = openApiOptions();
  assert.ok('openapi' in options, 'a dynamic document');
  assert.equal(options.openapi?.info?.version, pkg.version);
  assert.equal((JSON.parse(read('docs/openapi.json')) as Json).info.version, pkg.version);
  const headings = read('CHANGELOG.md')
    .split('\n')
    .filter((l) => l.startsWith('## ['));
  assert.ok(
    headings.some((h) => h.includes(pkg.version)),
    `a CHANGELOG.md section names ${pkg.version}`,
  );
});

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 50));
}

test('the broker accounts of deploy/mosquitto: each device its own topics, the service all of theirs', async (t) => {
  const bin = mosquittoBinary();
  const plugin = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']
    .map((d) => `${d}/mosquitto_dynamic_security.so`)
    .find((f) => fs.existsSync(f));
  if (bin === null || plugin === undefined || spawnSync('mosquitto_ctrl', ['--help']).error) {
    return t.skip('needs mosquitto, mosquitto_ctrl and the Dynamic Security plugin');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-dynsec-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  // The compose file's configuration, on a free port of loopback and in the temp dir.
  const conf = read('deploy/mosquitto/mosquitto.conf')
    .replace(/^listener 1883$/m, `listener ${port} 127.0.0.1`)
    .replaceAll('/mosquitto/data/', `${dir}/`)
    .replace('/usr/lib/mosquitto_dynamic_security.so', plugin);
  fs.writeFileSync(path.join(dir, 'mosquitto.conf'), conf);
  const admin = 'admin-password-for-test';
  assert.equal(spawnSync('mosquitto_ctrl', ['dynsec', 'init', `${dir}/dynamic-security.json`, 'admin', admin]).status, 0);
  const ids = process.getuid?.() === 0 ? userIds('mosquitto') : null; // started by root, it runs as its own user
  for (const f of ['', 'dynamic-security.json']) if (ids !== null) fs.chownSync(path.join(dir, f), ids.uid, ids.gid);
  const broker = spawn(bin, ['-c', path.join(dir, 'mosquitto.conf')], { stdio: 'ignore' });
  t.after(() => broker.kill('SIGKILL'));
  await until(
    () =>
      new Promise((resolve) =>
        net
          .connect(port, '127.0.0.1')
          .on('connect', function (this: net.Socket) {
            this.destroy();
            resolve(true);
          })
          .on('error', () => resolve(false)),
      ),
  );

  /** The script's exit status and what it said on stderr. */
  const dynsec = (...args: string[]) =>
    new Promise<string>((resolve) => {
      const env = { PATH: process.env.PATH, BROKER_HOST: '127.0.0.1', BROKER_PORT: String(port), DYNSEC_ADMIN_PASSWORD: admin };
      const child = spawn('sh', [path.join(root, 'deploy/mosquitto/storeops-dynsec.sh'), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (status) => resolve(`${status} ${err}`.trim()));
    });
  // One command at a time, as the script says: the plugin answers every admin connection on one
  // topic, so commands run together read each other's answers.
  const inTurn = async (calls: (() => Promise<string>)[]) => {
    const said: string[] = [];
    for (const call of calls) said.push(await call());
    return said;
  };
  assert.deepEqual(
    await inTurn([
      () => dynsec('service', 'storeops', 'service-password'),
      () => dynsec('locker', '100', 'old-locker-key'),
      () => dynsec('edge', 'store10-radio', 'edge-key-10'),
      () => dynsec('locker', '+', 'k'),
      () => dynsec('edge', 'store10-radio'),
    ]),
    [
      '0',
      '0',
      '0',
      '2 not a locker id: +',
      `2 ${read('deploy/mosquitto/storeops-dynsec.sh')
        .split('\n')
        .slice(6, 10)
        .map((l) => l.replace(/^# */, ''))
        .join('\n')}`,
    ],
  );
  // Again, as at every `docker compose up`, and with a changed key: each ends as asked.
  assert.deepEqual(await inTurn([() => dynsec('service', 'storeops', 'service-password'), () => dynsec('locker', '100', 'locker-key-100')]), ['0', '0']);

  const connect = (username: string, password: string) =>
    mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, connectTimeout: 3000 });
  await assert.rejects(connect('locker:100', 'old-locker-key'), /Not authorized|Bad username/i);
  const service = await connect('storeops', 'service-password');
  const locker = await connect('locker:100', 'locker-key-100');
  const edge = await connect('edge:store10-radio', 'edge-key-10');
  t.after(() => {
    for (const c of [service, locker, edge]) c.end(true);
  });
  const received = new Map([service, locker, edge].map((c) => [c, [] as string[]]));
  for (const [client, topics] of received) client.on('message', (topic) => topics.push(topic));

  const subscribe = async (client: mqtt.MqttClient, filters: string[]) => (await client.subscribeAsync(filters, { qos: 1 })).map((g) => g.qos);
  assert.deepEqual(await subscribe(service, ['lockers/+/acks', 'radio/+/played', 'radio/+/heard']), [1, 1, 1]);
  assert.deepEqual(await subscribe(locker, ['lockers/100/commands']), [1]);
  assert.deepEqual(await subscribe(edge, ['radio/store10-radio/play']), [1]);
  for (const filter of ['lockers/101/commands', 'lockers/+/commands', '#', 'lockers/100/acks', 'radio/store10-radio/play']) {
    await assert.rejects(locker.subscribeAsync(filter, { qos: 1 }), /Subscribe error/, `${filter} is refused`);
  }
  // In order from each sender: a message wrongly let through would arrive before the last one.
  for (const [client, topic] of [
    [service, 'lockers/101/commands'],
    [service, 'lockers/100/commands'],
    [service, 'radio/store10-radio/play'],
    [locker, 'lockers/101/acks'],
    [locker, 'radio/store10-radio/heard'],
    [locker, 'lockers/100/acks'],
    [edge, 'radio/other-radio/heard'],
    [edge, 'radio/store10-radio/played'],
    [edge, 'radio/store10-radio/heard'],
  ] as const) {
    await client.publishAsync(topic, 'x', { qos: 1 });
  }
  await until(() => received.get(service)?.length === 3 && received.get(locker)?.length === 1 && received.get(edge)?.length === 1);
  assert.deepEqual(received.get(locker), ['lockers/100/commands']);
  assert.deepEqual(received.get(edge), ['radio/store10-radio/play']);
  assert.deepEqual(received.get(service), ['lockers/100/acks', 'radio/store10-radio/played', 'radio/store10-radio/heard']);
  // A device that takes over another's client id (and its session, with the subscription) gets
  // none of its messages: a client receives only what its own role allows.
  const first = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
    username: 'locker:100',
    password: 'locker-key-100',
    clientId: 'taken',
    clean: false,
    reconnectPeriod: 0,
  });
  await first.subscribeAsync('lockers/100/commands', { qos: 1 });
  await first.endAsync();
  const taker = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
    username: 'edge:store10-radio',
    password: 'edge-key-10',
    clientId: 'taken',
    clean: false,
    reconnectPeriod: 0,
  });
  t.after(() => taker.end(true));
  const taken: string[] = [];
  taker.on('message', (topic) => taken.push(topic));
  await service.publishAsync('lockers/100/commands', 'for 100', { qos: 1 });
  await until(() => received.get(locker)?.length === 2);
  assert.deepEqual(taken, []);

  assert.equal(await dynsec('remove', 'locker', '100'), '0');
  await assert.rejects(connect('locker:100', 'locker-key-100'), /Not authorized|Bad username/i, 'removed');
});
