// The transactional outbox under failure: a dispatcher gone between the commit and the publish,
// two dispatchers on one database, a broker that goes away, a device that comes back.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, test } from 'node:test';
import { DeviceGateway } from '../../src/devices/gateway.ts';
import { enqueueDeviceMessage } from '../../src/devices/outbox.ts';
import { ManualClock } from '../../src/clock.ts';
import { makeWorld, testConfig, testDb, testGatewayOptions, TEST_MQTT_URL } from '../support/world.ts';
import { byKey, outboxState, queueCommand, startBareBroker, TestDevice, waitUntil, lockerLogin } from './device.ts';

// No app here: its gateway would dispatch what these tests mean to leave queued.
const db = await testDb();
const clock = new ManualClock(new Date());

/** A gateway of its own, as a second service instance would run one; stopped when the file ends. */
async function instance(opts: { config?: ReturnType<typeof testConfig>; batchSize?: number } = {}): Promise<DeviceGateway> {
  const gateway = new DeviceGateway({
    config: opts.config ?? testConfig(),
    db,
    clock,
    autoDispatch: false,
    batchSize: opts.batchSize,
    ...testGatewayOptions(),
  });
  await gateway.start();
  after(() => gateway.stop());
  return gateway;
}

test('a command committed while no dispatcher ran is delivered once by the next instance', async () => {
  const world = await makeWorld(db, clock);
  const topic = `lockers/${world.lockerId}/commands`;
  // The instance that made the change dies before its dispatcher publishes anything.
  const dying = await instance();
  const key = await queueCommand(db, clock, world.lockerId);
  await dying.stop();
  assert.equal((await outboxState(db, key)).published_at, null);

  // A new instance (with the embedded broker, a new broker too) starts; the device connects to it.
  const next = await instance();
  const device = await TestDevice.connect(next.deviceUrl ?? '', lockerLogin(world));
  try {
    await device.subscribe(topic);
    await next.settle();
    await next.dispatchPending();
    await device.next(byKey(key));
    await device.publish(`lockers/${world.lockerId}/acks`, { command_id: key });
    await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
    // Once a later message is through, any second copy of the first would have arrived before it.
    const later = await queueCommand(db, clock, world.lockerId);
    await next.dispatchPending();
    await device.next(byKey(later));
    assert.equal(device.count(byKey(key)), 1);
    assert.equal((await outboxState(db, key)).publish_attempts, 1);
  } finally {
    await device.end();
  }
});

test('a device that comes back is sent again, in order, what it has not acked, but nothing a later ack covers', async () => {
  const world = await makeWorld(db, clock);
  const topic = `lockers/${world.lockerId}/commands`;
  const gateway = await instance();
  const first = await TestDevice.connect(gateway.deviceUrl ?? '', lockerLogin(world));
  const [k1, k2, k3] = [
    await queueCommand(db, clock, world.lockerId, { command: 'open' }),
    await queueCommand(db, clock, world.lockerId, { command: 'close' }),
    await queueCommand(db, clock, world.lockerId, { command: 'open' }),
  ];
  try {
    await first.subscribe(topic);
    await gateway.settle(); // a redelivery of nothing
    await gateway.dispatchPending();
    for (const key of [k1, k2, k3]) await first.next(byKey(key));
    // It acted on all three but its acks of the first and the last were lost.
    await first.publish(`lockers/${world.lockerId}/acks`, { command_id: k2 });
    await waitUntil(async () => (await outboxState(db, k2)).acked_at !== null);
  } finally {
    await first.end();
  }

  const back = await TestDevice.connect(gateway.deviceUrl ?? '', lockerLogin(world));
  try {
    await back.subscribe(topic);
    // The embedded broker tells the service the device is listening; an external one may not.
    if (TEST_MQTT_URL !== null) assert.equal(await gateway.redeliverTo(topic), 1);
    await gateway.settle();
    await back.next(byKey(k3));
    const later = await queueCommand(db, clock, world.lockerId, { command: 'close' });
    await gateway.dispatchPending();
    await back.next(byKey(later));
    assert.deepEqual(
      back.received.map((m) => m.body.command_id),
      [k3, later],
      'k1 is older than the acked k2: never again',
    );
    assert.equal((await outboxState(db, k3)).publish_attempts, 2);
    assert.equal((await outboxState(db, k1)).publish_attempts, 1);
  } finally {
    await back.end();
  }
});

test('messages queued while the external broker is down are published when it is back', async () => {
  let broker = await startBareBroker();
  const port = broker.port;
  const gateway = new DeviceGateway({ config: testConfig({ MQTT_URL: broker.url }), db, clock, pollMs: 50, ...testGatewayOptions() });
  await gateway.start();
  after(() => gateway.stop());
  after(() => broker.close());
  assert.equal(gateway.up, true);
  await broker.close();
  await waitUntil(async () => !gateway.up);

  const world = await makeWorld(db, clock);
  const key = await queueCommand(db, clock, world.lockerId);
  gateway.notify();
  await gateway.settle();
  assert.equal((await outboxState(db, key)).published_at, null, 'nothing is lost by trying to publish to a broker that is away');

  broker = await startBareBroker(port);
  const device = await TestDevice.connect(broker.url, { clientId: `locker-${world.lockerId}` });
  try {
    await device.subscribe(`lockers/${world.lockerId}/commands`);
    await device.next(byKey(key)); // the gateway reconnects by itself and dispatches
    await gateway.settle();
    assert.notEqual((await outboxState(db, key)).published_at, null);
  } finally {
    await device.end();
  }
});

test("two dispatchers on one database publish each message once, each device's in order", async () => {
  const bare = TEST_MQTT_URL === null ? await startBareBroker() : null;
  if (bare !== null) after(() => bare.close());
  const url = TEST_MQTT_URL ?? bare?.url ?? '';
  const worlds = await Promise.all([1, 2, 3, 4].map(() => makeWorld(db, clock)));
  const topics = worlds.flatMap((w) => [`lockers/${w.lockerId}/commands`, `radio/${w.edgeId}/play`]);
  const observer = await TestDevice.connect(url);
  after(() => observer.end());
  for (const topic of topics) await observer.subscribe(topic);

  const keys: string[] = [];
  for (let i = 0; i < 200; i++) {
    const key = crypto.randomUUID();
    keys.push(key);
    await db.tx((q) => enqueueDeviceMessage(q, { topic: topics[i % topics.length] ?? '', payload: { command_id: key, n: i }, key }, clock.now()));
  }
  const config = testConfig({ MQTT_URL: url });
  const [a, b] = [await instance({ config, batchSize: 15 }), await instance({ config, batchSize: 15 })];
  await Promise.all([a.dispatchPending(), b.dispatchPending(), a.dispatchPending(), b.dispatchPending()]);

  const rows = await db.query<{ message_key: string; publish_attempts: number; published_at: string | null }>(
    'SELECT message_key, publish_attempts, published_at FROM device_outbox WHERE message_key = ANY($1)',
    [keys],
  );
  assert.equal(rows.length, 200);
  assert.ok(
    rows.every((r) => r.published_at !== null && r.publish_attempts === 1),
    'each message published exactly once',
  );

  for (const key of keys) await observer.next(byKey(key));
  const sentinel = crypto.randomUUID();
  await db.tx((q) => enqueueDeviceMessage(q, { topic: topics[0] ?? '', payload: { command_id: sentinel }, key: sentinel }, clock.now()));
  await a.dispatchPending();
  await observer.next(byKey(sentinel));
  for (const key of keys) assert.equal(observer.count(byKey(key)), 1);
  for (const [t, topic] of topics.entries()) {
    const expected = keys.filter((_, i) => i % topics.length === t);
    const got = observer.received.filter((m) => m.topic === topic && m.body.command_id !== sentinel).map((m) => m.body.command_id);
    assert.deepEqual(got, expected, `${topic} in the order queued`);
  }
});
