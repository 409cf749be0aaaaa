// Redelivery to a device that (re)subscribes, on the embedded broker: what the service holds
// written for one device stays within its byte budget however often it subscribes and however
// little it reads; subscriptions coming together make one redelivery, not one each; a new command
// for a device whose redelivery is under way follows it, and a play larger than the budget still
// goes out (alone).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { after, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { DeviceGateway } from '../../src/devices/gateway.ts';
import { enqueueDeviceMessage } from '../../src/devices/outbox.ts';
import { makeWorld, testConfig, testDb, testGatewayOptions, TEST_MQTT_URL } from '../support/world.ts';
import { byKey, queueCommand, TestDevice, waitUntil } from './device.ts';

const skip = TEST_MQTT_URL !== null && "the byte budget is the embedded broker's (an external broker keeps its own queues)";
const db = await testDb();
const clock = new ManualClock(new Date());
const BUDGET = 64 * 1024;
const config = testConfig({ MQTT_URL: '', DEVICE_INFLIGHT_BYTES: String(BUDGET) });
const gateway = new DeviceGateway({ config, db, clock, pollMs: 50, ...testGatewayOptions() });
if (!skip) {
  await gateway.start();
  after(() => gateway.stop());
}

/** Queues a play whose JSON is about `bytes` long (the audio inline, as older rows keep it). */
async function queueBigPlay(edgeId: string, bytes: number): Promise<string> {
  const key = crypto.randomUUID();
  const audio = crypto
    .randomBytes(Math.ceil((bytes * 3) / 4))
    .toString('base64')
    .slice(0, bytes);
  await db.tx((q) =>
    enqueueDeviceMessage(
      q,
      {
        topic: `radio/${edgeId}/play`,
        payload: { message_id: key, text: 'x', actor: 'test', mime: 'audio/wav', audio, queued_at: clock.now().toISOString() },
        key,
      },
      clock.now(),
    ),
  );
  return key;
}

const utf8 = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
};
const packet = (first: number, body: Buffer) => {
  const len: number[] = [];
  let n = body.length;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    len.push(byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from([first, ...len]), body]);
};

/** A device on a bare TCP socket that reads its CONNACK and then nothing more, ever. */
async function deafDevice(username: string, password: string): Promise<{ subscribe(topic: string, id: number): void; close(): void }> {
  const socket = net.connect(gateway.brokerPort ?? 0, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // CONNECT, MQTT 3.1.1, clean session, username and password, no keep-alive.
  socket.write(
    packet(
      0x10,
      Buffer.concat([utf8('MQTT'), Buffer.from([4, 0xc2, 0, 0]), utf8(`deaf-${crypto.randomBytes(4).toString('hex')}`), utf8(username), utf8(password)]),
    ),
  );
  const connack = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
  socket.pause();
  assert.equal(connack[3], 0, 'logged in');
  return {
    subscribe: (topic, id) => void socket.write(packet(0x82, Buffer.concat([Buffer.from([id >> 8, id & 0xff]), utf8(topic), Buffer.from([1])]))),
    close: () => socket.destroy(),
  };
}

test('an edge device that never reads and subscribes again and again is held to its byte budget', { skip }, async () => {
  const world = await makeWorld(db, clock);
  const topic = `radio/${world.edgeId}/play`;
  const message = 48 * 1024;
  // Published once while the device was away: 7.5 MB it has not acked, more than the system's
  // socket buffers take, so some of it must wait in the service.
  for (let i = 0; i < 160; i++) await queueBigPlay(world.edgeId, message);
  await gateway.dispatchPending();
  const device = await deafDevice(`edge:${world.edgeId}`, world.edgeKey);
  try {
    let most = 0;
    for (let i = 1; i <= 6; i++) {
      device.subscribe(topic, i);
      await new Promise((r) => setTimeout(r, 150));
      most = Math.max(most, gateway.bytesQueuedFor({ kind: 'edge', edgeId: world.edgeId }));
    }
    const held = () => gateway.bytesQueuedFor({ kind: 'edge', edgeId: world.edgeId });
    await waitUntil(async () => held() > 0); // the socket is full: from now on the service holds bytes
    const until = Date.now() + 1_000;
    while (Date.now() < until) {
      most = Math.max(most, gateway.bytesQueuedFor({ kind: 'edge', edgeId: world.edgeId }));
      await new Promise((r) => setTimeout(r, 25));
    }
    // The budget plus the one message that may exceed it, plus MQTT framing.
    assert.ok(most <= BUDGET + message + 1024, `held ${most} bytes for one device (budget ${BUDGET})`);
  } finally {
    device.close();
  }
});

test('subscriptions that come together make one redelivery: each unacked message comes at most twice', { skip }, async () => {
  const world = await makeWorld(db, clock);
  const topic = `lockers/${world.lockerId}/commands`;
  const creds = { username: `locker:${world.lockerId}`, password: world.lockerKey };
  const first = await TestDevice.connect(gateway.deviceUrl ?? '', creds);
  await first.subscribe(topic);
  const keys: string[] = [];
  for (let i = 0; i < 40; i++) keys.push(await queueCommand(db, clock, world.lockerId, { n: i }));
  await gateway.dispatchPending();
  for (const key of keys) await first.next(byKey(key));
  await first.end(); // none acked

  const back = await TestDevice.connect(gateway.deviceUrl ?? '', creds);
  try {
    await Promise.all(Array.from({ length: 6 }, () => back.subscribe(topic)));
    const later = await queueCommand(db, clock, world.lockerId, { n: 'later' });
    await gateway.dispatchPending();
    await back.next(byKey(later));
    await gateway.settle();
    await new Promise((r) => setTimeout(r, 200));
    for (const key of keys) assert.ok(back.count(byKey(key)) <= 2, `a message came ${back.count(byKey(key))} times`);
    // Every copy of each unacked command came before the new one: its order holds.
    const ids = back.received.map((m) => m.body.command_id);
    assert.ok(ids.indexOf(later) > Math.max(...keys.map((k) => ids.indexOf(k))), 'the new command after the redelivered ones');
    assert.deepEqual([...new Set(ids.slice(0, keys.length))], keys, 'redelivered in the order queued');
  } finally {
    await back.end();
  }
});

test('a play larger than the whole budget still reaches the device, alone', { skip }, async () => {
  const world = await makeWorld(db, clock);
  const device = await TestDevice.connect(gateway.deviceUrl ?? '', { username: `edge:${world.edgeId}`, password: world.edgeKey });
  try {
    await device.subscribe(`radio/${world.edgeId}/play`);
    const big = await queueBigPlay(world.edgeId, BUDGET * 3);
    const small = await queueBigPlay(world.edgeId, 100);
    await device.next(byKey(small));
    assert.equal((await device.next(byKey(big))).body.audio?.toString().length, BUDGET * 3);
    assert.deepEqual(
      device.received.map((m) => m.body.message_id),
      [big, small],
    );
    await waitUntil(async () => gateway.bytesQueuedFor({ kind: 'edge', edgeId: world.edgeId }) === 0);
  } finally {
    await device.end();
  }
});
