// The device channel as devices see it: real MQTT clients against the service's broker (embedded,
// or TEST_MQTT_URL with the service as its client).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, testApp, TEST_MQTT_URL } from '../support/world.ts';
import { byKey, outboxState, queueCommand, queuePlay, TestDevice, waitUntil, edgeLogin, lockerLogin } from './device.ts';

const ctx = await testApp();
const { db, clock, devices } = ctx;
const needsOwnBroker = TEST_MQTT_URL !== null && 'the external test broker is anonymous, without our HTTP auth plugin';

/** Device credentials; on an anonymous external broker they are sent and ignored. */

test('a locker connects with its key and receives the command queued for it', async () => {
  const world = await makeWorld(db, clock);
  const device = await TestDevice.connect(ctx.mqttUrl, lockerLogin(world));
  try {
    assert.equal(await device.subscribe(`lockers/${world.lockerId}/commands`), 1);
    const key = await queueCommand(db, clock, world.lockerId, { cabinet_key: 2, command: 'open', door: 'front' });
    const message = await device.next(byKey(key));
    assert.equal(message.topic, `lockers/${world.lockerId}/commands`);
    assert.deepEqual({ ...message.body, issued_at: undefined }, { command_id: key, cabinet_key: 2, command: 'open', door: 'front', issued_at: undefined });
    await devices.settle();
    assert.notEqual((await outboxState(db, key)).published_at, null);
  } finally {
    await device.end();
  }
});

test("an ack on the locker's ack topic marks its command acked, and keeps what the device said", async () => {
  const world = await makeWorld(db, clock);
  const device = await TestDevice.connect(ctx.mqttUrl, lockerLogin(world));
  try {
    await device.subscribe(`lockers/${world.lockerId}/commands`);
    const key = await queueCommand(db, clock, world.lockerId);
    await devices.dispatchPending();
    await device.next(byKey(key));
    assert.equal((await outboxState(db, key)).acked_at, null);
    await device.publish(`lockers/${world.lockerId}/acks`, { command_id: key, status: 'ok' });
    await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
    assert.deepEqual((await outboxState(db, key)).ack, { command_id: key, status: 'ok' });
  } finally {
    await device.end();
  }
});

test('an ack counts only on the topic of the device the message was for', async () => {
  const a = await makeWorld(db, clock);
  const b = await makeWorld(db, clock);
  const deviceB = await TestDevice.connect(ctx.mqttUrl, lockerLogin(b));
  try {
    const keyA = await queueCommand(db, clock, a.lockerId);
    const keyB = await queueCommand(db, clock, b.lockerId);
    await devices.dispatchPending();
    // B acks A's command on its own topic, then its own: once its own is recorded, so would A's be.
    await deviceB.publish(`lockers/${b.lockerId}/acks`, { command_id: keyA });
    await deviceB.publish(`lockers/${b.lockerId}/acks`, { command_id: keyB });
    await waitUntil(async () => (await outboxState(db, keyB)).acked_at !== null);
    await devices.settle();
    assert.equal((await outboxState(db, keyA)).acked_at, null);
  } finally {
    await deviceB.end();
  }
});

test('an edge device that was offline gets its play message when it comes back', async () => {
  const world = await makeWorld(db, clock);
  const topic = `radio/${world.edgeId}/play`;
  const clientId = `edge-${world.edgeId}`.slice(0, 23);
  // External broker: a persistent session (the broker queues QoS 1 for it). Embedded broker: a clean
  // session is enough, the service redelivers what is not acked when the device subscribes again.
  const persistent = TEST_MQTT_URL !== null;
  const first = await TestDevice.connect(ctx.mqttUrl, { ...edgeLogin(world), clientId, clean: !persistent });
  await first.subscribe(topic);
  await first.end();

  const key = await queuePlay(db, clock, world.edgeId);
  await devices.dispatchPending();
  assert.notEqual((await outboxState(db, key)).published_at, null, 'published while the device was away');

  const back = await TestDevice.connect(ctx.mqttUrl, { ...edgeLogin(world), clientId, clean: !persistent });
  try {
    if (!persistent) await back.subscribe(topic);
    const message = await back.next(byKey(key));
    assert.equal(message.topic, topic);
    assert.equal(message.body.text, 'Cleanup on aisle five');
    await back.publish(`radio/${world.edgeId}/played`, { message_id: key });
    await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
  } finally {
    await back.end();
    if (persistent) await (await TestDevice.connect(ctx.mqttUrl, { ...edgeLogin(world), clientId, clean: true })).end();
  }
});

test('a wrong key, an unknown device and an anonymous client are refused', { skip: needsOwnBroker }, async () => {
  const world = await makeWorld(db, clock);
  const refused = async (opts: { username?: string; password?: string }) => {
    const err = await TestDevice.connect(ctx.mqttUrl, opts).then(
      () => null,
      (e: unknown) => e as { code?: number },
    );
    assert.ok(err !== null, `connection with ${opts.username ?? 'no username'} must be refused`);
    return err.code;
  };
  assert.equal(await refused({ username: `locker:${world.lockerId}`, password: `${world.lockerKey}x` }), 4);
  assert.equal(await refused({ username: `locker:${world.lockerId}`, password: world.edgeKey }), 4);
  assert.equal(await refused({ username: `edge:${world.edgeId}`, password: world.lockerKey }), 4);
  assert.equal(await refused({ username: 'locker:999999999', password: world.lockerKey }), 4);
  assert.equal(await refused({ username: 'admin', password: world.lockerKey }), 4);
  assert.equal(await refused({}), 5);
  // The right key still works (so the refusals above are about the credentials).
  const ok = await TestDevice.connect(ctx.mqttUrl, lockerLogin(world));
  await ok.end();
});

test("a locker cannot subscribe to another locker's topic, nor receive its commands", { skip: needsOwnBroker }, async () => {
  const a = await makeWorld(db, clock);
  const b = await makeWorld(db, clock);
  const intruder = await TestDevice.connect(ctx.mqttUrl, lockerLogin(b));
  try {
    assert.equal(await intruder.subscribe(`lockers/${a.lockerId}/commands`), 128);
    assert.equal(await intruder.subscribe('lockers/+/commands'), 128);
    assert.equal(await intruder.subscribe('#'), 128);
    assert.equal(await intruder.subscribe(`radio/${b.edgeId}/play`), 128);
    assert.equal(await intruder.subscribe(`lockers/${b.lockerId}/acks`), 128);
    assert.equal(await intruder.subscribe(`lockers/${b.lockerId}/commands`), 1);
    const keyA = await queueCommand(db, clock, a.lockerId);
    const keyB = await queueCommand(db, clock, b.lockerId);
    await devices.dispatchPending();
    // Published in order on one broker: had A's reached B, it would have come before B's own.
    await intruder.next(byKey(keyB));
    assert.equal(intruder.count(byKey(keyA)), 0);
    assert.equal(intruder.received.length, 1);
  } finally {
    await intruder.end();
  }
});

test("a device that publishes on another device's topic is disconnected and acks nothing", { skip: needsOwnBroker }, async () => {
  const a = await makeWorld(db, clock);
  const b = await makeWorld(db, clock);
  const keyA = await queueCommand(db, clock, a.lockerId);
  await devices.dispatchPending();
  const intruder = await TestDevice.connect(ctx.mqttUrl, lockerLogin(b));
  const closed = intruder.closed();
  intruder.client.publish(`lockers/${a.lockerId}/acks`, JSON.stringify({ command_id: keyA }), { qos: 1 });
  await closed;
  await devices.settle();
  assert.equal((await outboxState(db, keyA)).acked_at, null);
  // Nor may a locker speak for an edge device, or write on a command topic.
  for (const topic of [`radio/${b.edgeId}/played`, `lockers/${b.lockerId}/commands`]) {
    const device = await TestDevice.connect(ctx.mqttUrl, lockerLogin(b));
    const gone = device.closed();
    device.client.publish(topic, JSON.stringify({ command_id: keyA }), { qos: 1 });
    await gone;
  }
  await devices.settle();
  assert.equal((await outboxState(db, keyA)).acked_at, null);
});

test('MQTT over WebSocket at /mqtt on the HTTP port reaches the same broker', { skip: needsOwnBroker }, async () => {
  const world = await makeWorld(db, clock);
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const device = await TestDevice.connect(`${address.replace(/^http/, 'ws')}/mqtt`, lockerLogin(world));
  try {
    assert.equal(await device.subscribe(`lockers/${world.lockerId}/commands`), 1);
    const key = await queueCommand(db, clock, world.lockerId);
    await device.next(byKey(key));
    await device.publish(`lockers/${world.lockerId}/acks`, { command_id: key });
    await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
    const wrong = await TestDevice.connect(`${address.replace(/^http/, 'ws')}/mqtt`, {
      username: `locker:${world.lockerId}`,
      password: 'wrong-key-wrong-key',
    }).then(
      () => null,
      (e: unknown) => e as { code?: number },
    );
    assert.equal(wrong?.code, 4);
  } finally {
    await device.end();
  }
});

test('readiness reports the broker', async () => {
  const response = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(response.statusCode, 200);
  assert.equal(response.json().mqtt, 'up');
});
