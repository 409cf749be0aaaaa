// The simulators tell a person what happened: whether the broker they reached is this service's
// (a locker simulator on some other MQTT broker must not look healthy), why a login was refused,
// why a connection was dropped (the same device connected twice), and they stop on a signal sent
// to `npm run simulate` as a supervisor or Ctrl-C sends it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { Aedes } from 'aedes';
import { startLockerSimulator } from '../../src/devices/simulators/locker.ts';
import { freePort } from '../../scripts/lib/free-port.ts';
import { makeWorld, testApp, TEST_MQTT_URL } from '../support/world.ts';

const ctx = await testApp();
const root = path.resolve(import.meta.dirname, '../..');
// What the simulator says of the service's broker comes from that broker's own answers (its name,
// its refusals); the external test broker is anonymous Mosquitto, which gives neither.
const needsOwnBroker = TEST_MQTT_URL !== null && "the external test broker is anonymous Mosquitto, not the service's broker";

async function until(lines: string[], pattern: RegExp, ms = 15_000): Promise<string> {
  for (let waited = 0; waited < ms; waited += 50) {
    const line = lines.find((l) => pattern.test(l));
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`no line matching ${pattern}:\n${lines.join('\n')}`);
}

function locker(world: { lockerId: number; lockerKey: string }, mqttUrl: string, lines: string[], key = world.lockerKey) {
  const simulator = startLockerSimulator({
    lockerId: world.lockerId,
    key,
    mqttUrl,
    httpUrl: 'http://127.0.0.1:9',
    print: (l) => lines.push(l),
    persistentSession: false,
  });
  after(() => simulator.close());
  return simulator;
}

test("a simulator on the service's broker says the broker is storeops's", { skip: needsOwnBroker }, async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const lines: string[] = [];
  await locker(world, ctx.mqttUrl, lines).ready;
  const said = await until(lines, /storeops/i);
  assert.match(said, new RegExp(ctx.mqttUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'names the broker it reached');
  assert.doesNotMatch(said, /not/i);
});

test("a simulator on another MQTT broker says it is not this service's, in one line", async () => {
  const aedes = await Aedes.createBroker(); // lets anyone in and subscribe to anything
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(async () => {
    // The simulator reconnects every 2 s: a connection it opens while the broker closes would keep
    // server.close() waiting, so the server stops listening first and every socket is ended.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    await closed;
  });
  const url = `mqtt://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const lines: string[] = [];
  const simulator = locker(await makeWorld(ctx.db, ctx.clock), url, lines);
  await simulator.ready;
  assert.match(await until(lines, /not (this service's|storeops)/i), new RegExp(url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  await simulator.close(); // before its broker, which it would otherwise wait for
});

test('a refused login says why once, not once per retry', { skip: needsOwnBroker }, async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const lines: string[] = [];
  locker(world, ctx.mqttUrl, lines, 'not-the-locker-key-000000000');
  await until(lines, /refused the login/);
  await new Promise((resolve) => setTimeout(resolve, 5_000)); // two more retries
  assert.equal(lines.filter((l) => /refused the login/.test(l)).length, 1, lines.join('\n'));
  assert.match(lines.find((l) => /refused the login/.test(l)) ?? '', /--key/);
});

test('a connection displaced by the same device connecting again says why', async () => {
  const world = await makeWorld(ctx.db, ctx.clock);
  const first: string[] = [];
  await locker(world, ctx.mqttUrl, first).ready;
  const second: string[] = [];
  await locker(world, ctx.mqttUrl, second).ready;
  assert.match(await until(first, /client id .* in use|took over|another connection/i), /locker-\d+-sim/);
});

test('npm run simulate stops on SIGTERM sent to npm', async (t) => {
  const port = await freePort();
  const npm = spawn('npm', ['run', '--silent', 'simulate', '--', 'webhooks', '--port', String(port), '--secret', 's3cret', '--host', '127.0.0.1'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const out: string[] = [];
  npm.stdout.on('data', (d: Buffer) => out.push(d.toString()));
  npm.stderr.on('data', (d: Buffer) => out.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  t.after(() => {
    // The whole group: a simulator that outlived npm (the failure this test finds) is killed too.
    try {
      process.kill(-(npm.pid ?? 0), 'SIGKILL');
    } catch {
      /* already gone */
    }
  });
  const listening = async () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  for (let i = 0; i < 300 && !(await listening()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(await listening(), `the receiver listens: ${out.join('')}`);
  npm.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 5_000))]);
  for (let i = 0; i < 100 && (await listening()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await listening(), false, `the simulator is gone (npm: ${code}): ${out.join('')}`);
});
