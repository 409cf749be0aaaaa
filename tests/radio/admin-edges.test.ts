// Section 18's radio edge devices and messaging accounts through HTTP: a new edge device's key works
// at once and is shown once; a rotated key and a disabled device are refused at the next request and
// MQTT connection, on another instance too; history is kept; a location admin manages its locations'
// devices; messaging accounts are the organization administrators', and a disabled one's signatures
// are refused; the file's objects are refused to administration and an admin's is taken over.
import crypto from 'node:crypto';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import twilio from 'twilio';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { TestDevice } from '../devices/device.ts';
import { adminWorld, auditOf, auditText, bearer, call, refusedToOutsiders, sessionOf } from '../people/admin-support.ts';
import { otherInstanceDb, TEST_MQTT_URL, testApp } from '../support/world.ts';
import { edgeKey, playText } from './support.ts';

const EDGES = '/api/admin/radio_edges';
const ACCOUNTS = '/api/admin/messaging_accounts';

test('a new edge device plays at once with the key shown once; a rotated key and a disabled device are refused at the next use, on every instance', async (t) => {
  const ctx = await testApp({ t });
  const other = await testApp({ t, db: await otherInstanceDb() });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const made = await call(ctx.app, admin, 'POST', EDGES, { location_id: w.locationId, name: 'Back radio', voice_handlers: ['chime'] });
  assert.equal(made.statusCode, 201, made.body);
  const { edge_id: edgeId, device_key: key, created_at, updated_at, ...rest } = made.json();
  assert.match(edgeId, /^edge-[0-9a-f]{12}$/);
  assert.match(key, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(created_at && updated_at);
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    location_id: w.locationId,
    name: 'Back radio',
    voice_handlers: ['chime'],
    announce_cfh: ['created', 'escalated', 'cancelled'],
    voice_actions: false,
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });
  const play = (app: typeof ctx.app, k: string) => playText(app, edgeKey(k), { edgeId, text: 'Cleanup in aisle 5', actor: 'Sam' });
  assert.equal((await play(other.app, key)).statusCode, 200, 'the other instance plays with the new key at once');
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${edgeId}`, password: key });
  device.client.end(true);

  const list = await call(ctx.app, admin, 'GET', EDGES);
  assert.ok(list.json().some((e: { edge_id: string }) => e.edge_id === edgeId));
  assert.ok(!list.body.includes(key), 'a list never shows a key');

  // A session opened with the old key on the other instance ends when the key is rotated.
  const connected = await TestDevice.connect(other.mqttUrl, { username: `edge:${edgeId}`, password: key });
  const ended = new Promise<void>((resolve) => connected.client.once('close', () => resolve()));
  const rotated = await call(ctx.app, admin, 'POST', `${EDGES}/${edgeId}/rotate_key`);
  assert.equal(rotated.statusCode, 200, rotated.body);
  const newKey = rotated.json().device_key as string;
  assert.notEqual(newKey, key);
  assert.equal(rotated.json().version, 2);
  assert.equal((await play(other.app, key)).statusCode, 403, 'the old key is refused at its next use on the other instance');
  assert.equal((await play(other.app, newKey)).statusCode, 200);
  // MQTT logins are the service's broker's to check: the embedded one refuses the old key and ends
  // its session at once. The external test broker is anonymous Mosquitto, which lets anyone in (a
  // production Mosquitto asks the service through its auth plugin: tests/devices/broker-auth.test.ts).
  if (TEST_MQTT_URL === null) {
    await assert.rejects(TestDevice.connect(ctx.mqttUrl, { username: `edge:${edgeId}`, password: key }), 'the old key cannot log in');
    await ended;
  }
  connected.client.end(true);

  const disabled = await call(ctx.app, admin, 'PATCH', `${EDGES}/${edgeId}`, { enabled: false }, { 'if-match': '"2"' });
  assert.deepEqual([disabled.statusCode, disabled.json().enabled, disabled.json().version], [200, false, 3]);
  assert.equal((await play(other.app, newKey)).statusCode, 403, 'a disabled device is refused at its next request');
  if (TEST_MQTT_URL === null) {
    await assert.rejects(TestDevice.connect(other.mqttUrl, { username: `edge:${edgeId}`, password: newKey }), 'and at its next connection');
  }
  const byToken = await other.app.inject({ method: 'GET', url: `/api/radio/transcripts?edge_id=${edgeId}`, headers: { authorization: `Bearer ${w.token}` } });
  assert.equal(byToken.statusCode, 200, 'its transcripts stay readable');

  const inUse = await call(ctx.app, admin, 'DELETE', `${EDGES}/${edgeId}?version=3`);
  assert.deepEqual([inUse.statusCode, inUse.json().code], [409, 'in_use']);
  const unused = (await call(ctx.app, admin, 'POST', EDGES, { location_id: w.locationId, name: 'Spare', edge_id: 'spare-radio-1' })).json();
  assert.equal((await call(ctx.app, admin, 'DELETE', `${EDGES}/spare-radio-1`)).statusCode, 428);
  assert.equal((await call(ctx.app, admin, 'DELETE', `${EDGES}/spare-radio-1?version=1`)).statusCode, 204);
  const again = await call(ctx.app, admin, 'POST', EDGES, { location_id: w.locationId, name: 'Dup', edge_id: edgeId });
  assert.deepEqual([again.statusCode, again.json().code], [409, 'id_taken']);

  const text = await auditText(ctx.db, w.organizationId);
  for (const secret of [key, newKey, unused.device_key]) assert.ok(!text.includes(secret), 'no key in the audit log');
  const actions = (await auditOf(ctx.db, w.organizationId, ['radio_edge.created', 'radio_edge.key_rotated', 'radio_edge.updated', 'radio_edge.deleted'])).map(
    (e) => [e.action, e.target_id, e.changes.device_key ?? e.changes.enabled ?? null],
  );
  assert.deepEqual(actions, [
    ['radio_edge.created', edgeId, { from: null, to: '[secret]' }],
    ['radio_edge.key_rotated', edgeId, { from: '[secret]', to: '[secret]' }],
    ['radio_edge.updated', edgeId, { from: true, to: false }],
    ['radio_edge.created', 'spare-radio-1', { from: null, to: '[secret]' }],
    ['radio_edge.deleted', 'spare-radio-1', { from: true, to: null }],
  ]);
});

test("a location admin manages its locations' edge devices; another location is 422 in a body and 404 by id; the file's are 409", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const lou = await sessionOf(ctx.app, w.locationAdmin);
  const atB = (await call(ctx.app, admin, 'POST', EDGES, { location_id: w.locationB, name: 'B radio' })).json().edge_id as string;
  const mine = await call(ctx.app, lou, 'POST', EDGES, { location_id: w.locationId, name: 'A radio' });
  assert.equal(mine.statusCode, 201, mine.body);
  const seen = (await call(ctx.app, lou, 'GET', EDGES)).json().map((e: { edge_id: string }) => e.edge_id);
  assert.deepEqual(seen.sort(), [w.edgeId, mine.json().edge_id].sort());
  const elsewhere = await call(ctx.app, lou, 'POST', EDGES, { location_id: w.locationB, name: 'x' });
  assert.deepEqual([elsewhere.statusCode, Object.keys(elsewhere.json().errors)], [422, ['location_id']]);
  assert.equal((await call(ctx.app, lou, 'PATCH', `${EDGES}/${atB}`, { name: 'y', version: 1 })).statusCode, 404);
  assert.equal((await call(ctx.app, lou, 'POST', `${EDGES}/${atB}/rotate_key`)).statusCode, 404);
  assert.equal((await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'PATCH', `${EDGES}/${atB}`, { name: 'y', version: 1 })).statusCode, 404);
  const fileOwned = await call(ctx.app, lou, 'PATCH', `${EDGES}/${w.edgeId}`, { name: 'y', version: 1 });
  assert.deepEqual([fileOwned.statusCode, fileOwned.json().code], [409, 'managed_by_file']);
  assert.equal((await call(ctx.app, lou, 'POST', `${EDGES}/${w.edgeId}/rotate_key`)).json().code, 'managed_by_file');
  await refusedToOutsiders(ctx.app, w, (caller) => [call(ctx.app, caller, 'GET', EDGES), call(ctx.app, caller, 'GET', ACCOUNTS)]);

  // The file names the admin's device: it is the file's now, with an audit entry saying so.
  const id = mine.json().edge_id as string;
  await applyProvisioning(ctx.db, ctx.clock, {
    radio_edges: [{ edge_id: id, location_id: w.locationId, name: 'A radio', device_key: crypto.randomBytes(24).toString('base64url') }],
  });
  const after = (await call(ctx.app, lou, 'GET', EDGES)).json().find((e: { edge_id: string }) => e.edge_id === id);
  assert.deepEqual([after.managed_by, after.version], ['file', 2]);
  const [entry] = await auditOf(ctx.db, w.organizationId, ['radio_edge.taken_over']);
  assert.deepEqual([entry?.actor_type, entry?.target_id], ['provisioning', id]);
});

test('messaging accounts are for organization administrators; a disabled account signs nothing; its auth token is never shown', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const sid = `AC${'0123456789abcdef'.repeat(2)}`;
  const authToken = 'provider-auth-token-0001';
  const made = await call(ctx.app, admin, 'POST', ACCOUNTS, { account_sid: sid, auth_token: authToken });
  assert.equal(made.statusCode, 201, made.body);
  assert.deepEqual(Object.keys(made.json()).sort(), ['account_sid', 'created_at', 'enabled', 'managed_by', 'organization_id', 'updated_at', 'version']);
  const bad = await call(ctx.app, admin, 'POST', ACCOUNTS, { account_sid: 'short', auth_token: 'x' });
  assert.deepEqual([bad.statusCode, Object.keys(bad.json().errors).sort()], [422, ['account_sid', 'auth_token']]);
  assert.equal((await call(ctx.app, admin, 'POST', ACCOUNTS, { account_sid: sid, auth_token: authToken })).json().code, 'id_taken');
  for (const caller of [await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)]) {
    assert.equal((await call(ctx.app, caller, 'GET', ACCOUNTS)).json().code, 'forbidden');
  }
  const list = await call(ctx.app, bearer(w.adminToken), 'GET', ACCOUNTS);
  assert.deepEqual(
    list.json().map((a: { account_sid: string; managed_by: string }) => [a.account_sid, a.managed_by]),
    [
      [w.accountSid, 'file'],
      [sid, 'admin'],
    ].sort(),
  );
  assert.ok(!list.body.includes(authToken) && !list.body.includes(w.authToken));

  // R2 signed with the account's token plays; disabled, the same signature is refused.
  const path = `/webhooks/incoming/messaging/${w.edgeId}`;
  const send = (messageSid: string) => {
    const params = { AccountSid: sid, Body: 'Spill in aisle 3', From: '+15551230000', To: '+15559870000', MessageSid: messageSid };
    const signature = twilio.getExpectedTwilioSignature(authToken, ctx.config.publicBaseUrl + path, params);
    return ctx.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-messaging-signature': signature },
      payload: new URLSearchParams(params).toString(),
    });
  };
  assert.equal((await send('SM00000000000000000000000000000001')).statusCode, 200);
  const off = await call(ctx.app, admin, 'PATCH', `${ACCOUNTS}/${sid}`, { enabled: false, version: 1 });
  assert.equal(off.json().enabled, false);
  assert.equal((await send('SM00000000000000000000000000000002')).statusCode, 403);
  const inUse = await call(ctx.app, admin, 'DELETE', `${ACCOUNTS}/${sid}?version=2`);
  assert.deepEqual([inUse.statusCode, inUse.json().code], [409, 'in_use']);
  assert.equal((await call(ctx.app, admin, 'PATCH', `${ACCOUNTS}/${w.accountSid}`, { enabled: false, version: 1 })).json().code, 'managed_by_file');
  const text = await auditText(ctx.db, w.organizationId);
  assert.ok(!text.includes(authToken));
  assert.deepEqual(
    (await auditOf(ctx.db, w.organizationId, ['messaging_account.created', 'messaging_account.updated'])).map((e) => e.changes),
    [{ enabled: { from: null, to: true }, auth_token: { from: null, to: '[secret]' } }, { enabled: { from: true, to: false } }],
  );
});
