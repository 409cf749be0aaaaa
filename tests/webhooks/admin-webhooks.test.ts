// Section 18's webhook endpoints through HTTP: made with a secret shown once and never again, live at
// the next event, versions, the file's endpoints and its takeover, history kept, what a location
// admin may reach, the audit log without secrets, and testWebhook with the address rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { adminWorld, auditOf, auditText, bearer, call, refusedToOutsiders, sessionOf } from '../people/admin-support.ts';
import { freshId, otherInstanceDb, testApp } from '../support/world.ts';
import { deliverNow, deliveriesOf, Receiver, verifySignature, webhookApp } from './support.ts';

const HOOKS = '/api/admin/webhooks';

test('an org admin adds a signed endpoint: its secret is answered once, and it gets the next event, signed with it', async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const receiver = await Receiver.start(t);
  const made = await call(ctx.app, admin, 'POST', HOOKS, { url: receiver.url, location_id: w.locationId, events: ['callforhelp'] });
  assert.equal(made.statusCode, 201, made.body);
  const { id, secret, created_at, updated_at, ...rest } = made.json();
  assert.ok(Number.isInteger(id) && created_at && updated_at);
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/, 'made by the service');
  assert.equal(made.headers.etag, '"1"');
  assert.deepEqual(rest, {
    organization_id: w.organizationId,
    location_id: w.locationId,
    url: receiver.url,
    format: 'signed',
    events: ['callforhelp'],
    enabled: true,
    version: 1,
    managed_by: 'admin',
  });

  const list = await call(ctx.app, admin, 'GET', HOOKS);
  assert.equal(list.statusCode, 200);
  assert.ok(!list.body.includes(secret), 'a list never shows the secret');
  assert.deepEqual(
    list.json().find((e: { id: number }) => e.id === id),
    { id, created_at, updated_at, ...rest },
  );

  // Live: the next event goes to it.
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  assert.equal(receiver.received.length, 1);
  const [got] = receiver.received;
  assert.equal(verifySignature(secret, got?.headers ?? {}, got?.raw ?? ''), true, 'signed with the secret answered at creation');

  const text = await auditText(ctx.db, w.organizationId);
  assert.ok(!text.includes(secret), 'the audit log never shows the secret');
  const [entry] = await auditOf(ctx.db, w.organizationId, ['webhook.created']);
  assert.deepEqual([entry?.target_id, entry?.location_id, entry?.changes.secret], [String(id), w.locationId, { from: null, to: '[secret]' }]);
});

test('changes need the version: 428 without, 412 stale; a change and a delete are audited; a delete with deliveries is 409 in_use', async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const receiver = await Receiver.start(t);
  const id = (await call(ctx.app, admin, 'POST', HOOKS, { url: receiver.url, events: ['callforhelp'] })).json().id as number;

  assert.deepEqual((await call(ctx.app, admin, 'PATCH', `${HOOKS}/${id}`, { events: [] })).json().code, 'version_required');
  const stale = await call(ctx.app, admin, 'PATCH', `${HOOKS}/${id}`, { events: [], version: 3 });
  assert.deepEqual([stale.statusCode, stale.json().code], [412, 'version_conflict']);
  const bad = await call(ctx.app, admin, 'PATCH', `${HOOKS}/${id}`, { url: 'ftp://x', secret: 'x'.repeat(20) }, { 'if-match': '"1"' });
  assert.equal(bad.statusCode, 422);
  assert.ok(bad.json().errors.url, bad.body);

  const changed = await call(ctx.app, admin, 'PATCH', `${HOOKS}/${id}`, { events: ['callforhelp', 'locker'] }, { 'if-match': '"1"' });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.deepEqual([changed.json().version, changed.json().events, changed.headers.etag], [2, ['callforhelp', 'locker'], '"2"']);

  // It delivered: deleting it would lose its deliveries' history.
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  const inUse = await call(ctx.app, admin, 'DELETE', `${HOOKS}/${id}?version=2`);
  assert.deepEqual([inUse.statusCode, inUse.json().code], [409, 'in_use']);
  const retired = await call(ctx.app, admin, 'PATCH', `${HOOKS}/${id}`, { enabled: false, version: 2 });
  assert.equal(retired.json().enabled, false);
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  assert.equal(receiver.received.length, 1, 'a retired endpoint gets no new event');
  assert.equal((await call(ctx.app, bearer(w.adminToken), 'GET', HOOKS)).statusCode, 200, 'an admin token lists them too');

  const fresh = (await call(ctx.app, admin, 'POST', HOOKS, { url: receiver.url, events: [] })).json().id as number;
  assert.equal((await call(ctx.app, admin, 'DELETE', `${HOOKS}/${fresh}`, undefined, { 'if-match': '"1"' })).statusCode, 204);
  assert.equal((await call(ctx.app, admin, 'DELETE', `${HOOKS}/${fresh}?version=1`)).statusCode, 404);
  const actions = (await auditOf(ctx.db, w.organizationId, ['webhook.created', 'webhook.updated', 'webhook.deleted'])).map((e) => e.action);
  assert.deepEqual(actions, ['webhook.created', 'webhook.updated', 'webhook.updated', 'webhook.created', 'webhook.deleted']);
  assert.deepEqual(await deliveriesOf(ctx.app, w.token, id).then((d) => d.length), 1, 'its deliveries stay listed');
});

test("a location admin manages its locations' endpoints only; the organization's are 403, another organization's 404", async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const lou = await sessionOf(ctx.app, w.locationAdmin);
  const url = 'https://example.com/hook';
  const orgWide = (await call(ctx.app, admin, 'POST', HOOKS, { url })).json().id as number;
  const atB = (await call(ctx.app, admin, 'POST', HOOKS, { url, location_id: w.locationB })).json().id as number;
  const foreign = (await call(ctx.app, await sessionOf(ctx.app, w.other.admin), 'POST', HOOKS, { url })).json().id as number;

  const mine = await call(ctx.app, lou, 'POST', HOOKS, { url, location_id: w.locationId });
  assert.equal(mine.statusCode, 201, mine.body);
  assert.deepEqual(
    (await call(ctx.app, lou, 'GET', HOOKS)).json().map((e: { id: number }) => e.id),
    [mine.json().id],
  );
  const limited = await call(ctx.app, bearer(w.limitedToken), 'GET', HOOKS);
  assert.deepEqual(
    limited.json().map((e: { id: number }) => e.id),
    [mine.json().id],
  );

  assert.deepEqual((await call(ctx.app, lou, 'POST', HOOKS, { url })).json().code, 'forbidden');
  const elsewhere = await call(ctx.app, lou, 'POST', HOOKS, { url, location_id: w.locationB });
  assert.deepEqual([elsewhere.statusCode, Object.keys(elsewhere.json().errors ?? {})], [422, ['location_id']]);
  assert.deepEqual((await call(ctx.app, lou, 'PATCH', `${HOOKS}/${orgWide}`, { enabled: false, version: 1 })).statusCode, 403);
  assert.deepEqual((await call(ctx.app, lou, 'PATCH', `${HOOKS}/${atB}`, { enabled: false, version: 1 })).statusCode, 404);
  assert.deepEqual((await call(ctx.app, admin, 'PATCH', `${HOOKS}/${foreign}`, { enabled: false, version: 1 })).statusCode, 404);
  assert.deepEqual((await call(ctx.app, admin, 'POST', `${HOOKS}/${foreign}/test`)).statusCode, 404);
  await refusedToOutsiders(ctx.app, w, (caller) => [call(ctx.app, caller, 'GET', HOOKS), call(ctx.app, caller, 'POST', HOOKS, { url })]);
});

test("the file's endpoints are refused to administration (409 managed_by_file); a file naming an admin's endpoint takes it over", async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const fileId = freshId();
  await applyProvisioning(ctx.db, ctx.clock, {
    webhooks: [{ id: fileId, organization_id: w.organizationId, url: 'https://example.com/file', secret: 'file-secret' }],
  });
  const refused = await call(ctx.app, admin, 'PATCH', `${HOOKS}/${fileId}`, { enabled: false, version: 1 });
  assert.deepEqual([refused.statusCode, refused.json().code], [409, 'managed_by_file']);
  assert.equal((await call(ctx.app, admin, 'DELETE', `${HOOKS}/${fileId}?version=1`)).json().code, 'managed_by_file');
  const taken = await call(ctx.app, admin, 'POST', HOOKS, { id: fileId, url: 'https://example.com/x' });
  assert.deepEqual([taken.statusCode, taken.json().code], [409, 'id_taken']);

  const mine = (await call(ctx.app, admin, 'POST', HOOKS, { url: 'https://example.com/mine' })).json().id as number;
  await applyProvisioning(
    ctx.db,
    ctx.clock,
    { webhooks: [{ id: mine, organization_id: w.organizationId, url: 'https://example.com/now-the-files', secret: 'file-secret' }] },
    { source: 'store.json' },
  );
  const after = (await call(ctx.app, admin, 'GET', HOOKS)).json().find((e: { id: number }) => e.id === mine);
  assert.deepEqual([after.managed_by, after.url, after.version], ['file', 'https://example.com/now-the-files', 2]);
  const [entry] = await auditOf(ctx.db, w.organizationId, ['webhook.taken_over']);
  assert.deepEqual([entry?.actor_type, entry?.target_id, entry?.changes.managed_by], ['provisioning', String(mine), { from: 'admin', to: 'file' }]);
});

test('testWebhook sends one signed test event now and answers what came back; a private address is refused without WEBHOOK_ALLOW_PRIVATE', async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const receiver = await Receiver.start(t);
  const made = (await call(ctx.app, admin, 'POST', HOOKS, { url: receiver.url, secret: receiver.secret })).json();
  const res = await call(ctx.app, admin, 'POST', `${HOOKS}/${made.id}/test`);
  assert.equal(res.statusCode, 200, res.body);
  const answer = res.json();
  assert.deepEqual([answer.delivered, answer.status_code, answer.body_excerpt, answer.error], [true, 200, 'ok', null]);
  assert.ok(Number.isInteger(answer.duration_ms));
  assert.equal(receiver.received.length, 1);
  assert.equal(receiver.received[0]?.signed, true);
  assert.deepEqual([receiver.received[0]?.body.type, receiver.received[0]?.body.status], ['callforhelp', 'test']);
  receiver.behaviour = 'status500';
  const failed = (await call(ctx.app, admin, 'POST', `${HOOKS}/${made.id}/test`)).json();
  assert.deepEqual([failed.delivered, failed.status_code, failed.body_excerpt], [false, 500, 'boom']);
  assert.equal((await ctx.db.query('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1', [made.id])).length, 0, 'a test is no delivery');

  // The same endpoint from a service that does not allow private addresses.
  const strict = await testApp({ t, db: await otherInstanceDb() });
  const strictAdmin = await sessionOf(strict.app, w.admin);
  const refused = (await call(strict.app, strictAdmin, 'POST', `${HOOKS}/${made.id}/test`)).json();
  assert.equal(refused.delivered, false);
  assert.equal(refused.status_code, null);
  assert.match(refused.error, /private address.*WEBHOOK_ALLOW_PRIVATE/);
  assert.equal(receiver.received.length, 2, 'nothing reached the receiver');
});
