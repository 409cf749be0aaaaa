// The endpoints an external broker's HTTP auth plugin calls: the same credentials and topic rules
// as the embedded broker, behind the shared MQTT_AUTH_SECRET.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { compose } from '../../src/compose.ts';
import type { Config } from '../../src/config.ts';
import { ManualClock } from '../../src/clock.ts';
import { DeviceGateway } from '../../src/devices/gateway.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { makeWorld, testConfig, testDb, testGatewayOptions, testSpeech, TEST_SECRET } from '../support/world.ts';
import { byKey, outboxState, queueCommand, startBareBroker, TestDevice } from './device.ts';

const BROKER_SECRET = 'broker-secret-0123456789';
const db = await testDb();
const clock = new ManualClock(new Date());
// The service logs in to its broker as storeops / svc-password-123 (MQTT_URL). The gateway is not
// started: these decisions need the database only. (No testApp here: its running gateway would
// publish what the last test leaves queued.)
const config = testConfig({ MQTT_URL: 'mqtt://storeops:svc-password-123@broker.invalid:1883', MQTT_AUTH_SECRET: BROKER_SECRET });
const devices = new DeviceGateway({ config, db, clock });
/** The service's app around a gateway that is not started by it. */
const serviceApp = async (cfg: Config, gateway: DeviceGateway, failureLimit?: { max: number; windowMs: number }) =>
  (
    await compose({
      config: cfg,
      db,
      clock,
      devices: () => gateway,
      speech: testSpeech(),
      secretDigest: sha256hex(TEST_SECRET),
      manualJobs: true,
      ...(failureLimit ? { failureLimit } : {}),
    })
  ).app;
const app = await serviceApp(config, devices);
after(() => app.close());
const world = await makeWorld(db, clock);
const other = await makeWorld(db, clock);

const auth = { authorization: `Bearer ${BROKER_SECRET}` };
const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = auth) => app.inject({ method: 'POST', url, payload, headers });

test('without MQTT_AUTH_SECRET the broker endpoints do not exist', async () => {
  const config = testConfig();
  const plain = await serviceApp(config, new DeviceGateway({ config, db, clock }));
  after(() => plain.close());
  const response = await plain.inject({ method: 'POST', url: '/internal/mqtt/emqx/authn', payload: { username: 'x', password: 'y' }, headers: auth });
  assert.equal(response.statusCode, 404);
  assert.equal(response.json().code, 'not_found');
});

test('a missing or wrong broker secret is 401', async () => {
  const body = { username: `locker:${world.lockerId}`, password: world.lockerKey };
  const attempts: Record<string, string>[] = [
    {},
    { authorization: 'Bearer nope-nope-nope-nope' },
    { 'user-agent': 'mosquitto' },
    { authorization: BROKER_SECRET },
  ];
  for (const headers of attempts) {
    const response = await post('/internal/mqtt/emqx/authn', body, headers);
    assert.equal(response.statusCode, 401, JSON.stringify(headers));
    assert.equal(response.json().code, 'unauthorized');
  }
});

test('EMQX authentication allows a device with its own key and the service as superuser, nobody else', async () => {
  const cases: [string, string, unknown][] = [
    [`locker:${world.lockerId}`, world.lockerKey, { result: 'allow', is_superuser: false }],
    [`edge:${world.edgeId}`, world.edgeKey, { result: 'allow', is_superuser: false }],
    ['storeops', 'svc-password-123', { result: 'allow', is_superuser: true }],
    [`locker:${world.lockerId}`, other.lockerKey, { result: 'deny' }],
    [`locker:${world.lockerId}`, world.edgeKey, { result: 'deny' }],
    [`edge:${world.edgeId}`, world.lockerKey, { result: 'deny' }],
    ['storeops', 'svc-password-124', { result: 'deny' }],
    ['locker:2147483647', world.lockerKey, { result: 'deny' }],
    [`lockers:${world.lockerId}`, world.lockerKey, { result: 'deny' }],
    ['', '', { result: 'deny' }],
  ];
  for (const [username, password, expected] of cases) {
    const response = await post('/internal/mqtt/emqx/authn', { username, password, clientid: 'c1' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), expected, `${username} / ${password === '' ? 'empty' : 'key'}`);
  }
});

test('EMQX authorization: a device subscribes to its own inbox and publishes on its own ack topic only', async () => {
  const L = `locker:${world.lockerId}`;
  const E = `edge:${world.edgeId}`;
  const cases: [string, string, string, 'allow' | 'deny'][] = [
    [L, 'subscribe', `lockers/${world.lockerId}/commands`, 'allow'],
    [L, 'publish', `lockers/${world.lockerId}/acks`, 'allow'],
    [L, 'subscribe', `lockers/${other.lockerId}/commands`, 'deny'],
    [L, 'subscribe', 'lockers/+/commands', 'deny'],
    [L, 'subscribe', '#', 'deny'],
    [L, 'subscribe', `lockers/${world.lockerId}/acks`, 'deny'],
    [L, 'publish', `lockers/${world.lockerId}/commands`, 'deny'],
    [L, 'publish', `lockers/${other.lockerId}/acks`, 'deny'],
    [L, 'publish', `radio/${world.edgeId}/played`, 'deny'],
    [L, 'all', `lockers/${world.lockerId}/commands`, 'deny'],
    [E, 'subscribe', `radio/${world.edgeId}/play`, 'allow'],
    [E, 'publish', `radio/${world.edgeId}/played`, 'allow'],
    [E, 'subscribe', `radio/${other.edgeId}/play`, 'deny'],
    [E, 'publish', `lockers/${world.lockerId}/acks`, 'deny'],
    ['storeops', 'publish', `lockers/${world.lockerId}/commands`, 'allow'],
    ['storeops', 'subscribe', 'lockers/+/acks', 'allow'],
    ['someone', 'subscribe', `lockers/${world.lockerId}/commands`, 'deny'],
  ];
  for (const [username, action, topic, result] of cases) {
    const response = await post('/internal/mqtt/emqx/authz', { username, topic, action, clientid: 'c1' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { result }, `${username} ${action} ${topic}`);
  }
});

test('mosquitto-go-auth: user, superuser and ACL checks answer 200 or 403, with the secret as User-Agent and form bodies too', async () => {
  const ua = { 'user-agent': BROKER_SECRET };
  assert.equal(
    (await post('/internal/mqtt/mosquitto/user', { username: `locker:${world.lockerId}`, password: world.lockerKey, clientid: 'c' }, ua)).statusCode,
    200,
  );
  const wrong = await post('/internal/mqtt/mosquitto/user', { username: `locker:${world.lockerId}`, password: 'not-the-key-at-all', clientid: 'c' }, ua);
  assert.equal(wrong.statusCode, 403);
  assert.equal(wrong.json().code, 'forbidden');
  assert.equal((await post('/internal/mqtt/mosquitto/superuser', { username: 'storeops' }, ua)).statusCode, 200);
  assert.equal((await post('/internal/mqtt/mosquitto/superuser', { username: `locker:${world.lockerId}` }, ua)).statusCode, 403);

  const acl = (acc: number | string, topic: string, username = `edge:${world.edgeId}`) =>
    post('/internal/mqtt/mosquitto/acl', { username, topic, acc, clientid: 'c' }, ua).then((r) => r.statusCode);
  assert.equal(await acl(4, `radio/${world.edgeId}/play`), 200);
  assert.equal(await acl(1, `radio/${world.edgeId}/play`), 200);
  assert.equal(await acl(2, `radio/${world.edgeId}/played`), 200);
  assert.equal(await acl(3, `radio/${world.edgeId}/play`), 403);
  assert.equal(await acl(1, `radio/${other.edgeId}/play`), 403);
  assert.equal(await acl(4, 'radio/#'), 403);
  assert.equal(await acl(2, `radio/${world.edgeId}/play`), 403);
  assert.equal(await acl('4', `radio/${world.edgeId}/play`), 200);
  assert.equal(await acl(3, 'lockers/1/commands', 'storeops'), 200);

  const form = await app.inject({
    method: 'POST',
    url: '/internal/mqtt/mosquitto/acl',
    headers: { ...ua, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username: `locker:${world.lockerId}`, topic: `lockers/${world.lockerId}/acks`, acc: '2', clientid: 'c' }).toString(),
  });
  assert.equal(form.statusCode, 200);
});

test('a malformed broker request is 422, not a decision', async () => {
  const response = await post('/internal/mqtt/emqx/authz', { username: 'x', topic: 't', action: 'read' });
  assert.equal(response.statusCode, 422);
  assert.ok(response.json().errors.action);
  assert.equal((await post('/internal/mqtt/mosquitto/acl', { username: 'x', topic: 't', acc: 7 })).statusCode, 422);
  assert.equal((await post('/internal/mqtt/emqx/authn', { password: 'x' })).statusCode, 422);
});

test('the broker endpoints are in the OpenAPI document', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
  for (const id of ['mqttEmqxAuthenticate', 'mqttEmqxAuthorize', 'mqttMosquittoUser', 'mqttMosquittoSuperuser', 'mqttMosquittoAcl'])
    assert.ok(ids.includes(id), id);
});

test("when an external broker asks about a device's subscription, the device is then sent what it has not acked", async () => {
  const broker = await startBareBroker();
  after(() => broker.close());
  const external = testConfig({ MQTT_URL: broker.url, MQTT_AUTH_SECRET: BROKER_SECRET });
  const gateway = new DeviceGateway({ config: external, db, clock, autoDispatch: false, ...testGatewayOptions() });
  await gateway.start();
  after(() => gateway.stop());
  const service = await serviceApp(external, gateway);
  after(() => service.close());

  const device = await makeWorld(db, clock);
  const topic = `lockers/${device.lockerId}/commands`;
  const key = await queueCommand(db, clock, device.lockerId);
  await gateway.dispatchPending(); // published while the locker was away, with no session to keep it
  const locker = await TestDevice.connect(broker.url, { clientId: `locker-${device.lockerId}` });
  try {
    await locker.subscribe(topic);
    const answer = await service.inject({
      method: 'POST',
      url: '/internal/mqtt/emqx/authz',
      headers: auth,
      payload: { username: `locker:${device.lockerId}`, topic, action: 'subscribe' },
    });
    assert.deepEqual(answer.json(), { result: 'allow' });
    await locker.next(byKey(key));
    await gateway.settle();
    assert.equal((await outboxState(db, key)).publish_attempts, 2);
  } finally {
    await locker.end();
  }
});

test('refusals the broker relays do not trip the brute-force guard; guessing the broker secret does', async () => {
  const guarded = await serviceApp(config, devices, { max: 5, windowMs: 60_000 });
  after(() => guarded.close());
  const ask = (headers: Record<string, string>) =>
    guarded.inject({
      method: 'POST',
      url: '/internal/mqtt/mosquitto/acl',
      headers,
      payload: { username: `locker:${world.lockerId}`, topic: `lockers/${other.lockerId}/commands`, acc: 4, clientid: 'c' },
    });
  for (let i = 0; i < 20; i++) assert.equal((await ask({ 'user-agent': BROKER_SECRET })).statusCode, 403);
  const login = await guarded.inject({
    method: 'POST',
    url: '/internal/mqtt/mosquitto/user',
    headers: { 'user-agent': BROKER_SECRET },
    payload: { username: `locker:${world.lockerId}`, password: world.lockerKey },
  });
  assert.equal(login.statusCode, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await ask({ 'user-agent': 'a-guessed-secret-value' })).statusCode);
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
});
