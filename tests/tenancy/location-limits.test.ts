// A token limited to some locations (`location_ids`, contract section 2) on every operation that
// names a location or an object of one: another location of its own organization is treated
// exactly as another organization's (the same status and body as a stranger's token gets), and
// nothing changes; the same token limited to the right location does the same operation.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { describe, probeRefusesCleanly, type Probe } from '../support/contract.ts';
import { makeCfhWorld, type CfhWorld } from '../cfh/support.ts';
import { deliveriesOf, deliverNow, provisionEndpoint } from '../webhooks/support.ts';
import { freshId, makeWorld, provisionToken, testApp, testConfig, type TestContext } from '../support/world.ts';

const ALL = ['cfh', 'radio', 'buttons', 'reports', 'devices', 'webhooks'] as const;

let ctx: TestContext;
let w: CfhWorld;
let endpointId: number;
let deliveryId: number;
before(async () => {
  // Deliveries to an address no one listens on stay pending: W2 has one to send again.
  ctx = await testApp({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }) });
  w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 0 } });
  endpointId = await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, locationId: w.locationId, url: 'http://127.0.0.1:9/hook', secret: 'a-receiver-secret' });
  const res = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload: { location_id: w.locationId, option_id: w.optionId } });
  assert.equal(res.statusCode, 201, res.body);
  await deliverNow(ctx);
  const whole = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  const [d] = await deliveriesOf(ctx.app, whole, endpointId);
  assert.ok(d !== undefined);
  deliveryId = d.id;
});

/** Every operation that names w's location or one of its objects, with the given Authorization. */
async function operations(authorization: string, hub: string): Promise<[string, Probe][]> {
  const open = async () => (await ctx.app.inject({
    method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload: { location_id: w.locationId, option_id: w.optionId },
  })).json<{ message_id: string }>().message_id;
  // One request for the staff steps, one to cancel, one of the button for B2.
  const messageId = await open();
  const toCancel = await open();
  const pressed = await ctx.app.inject({ method: 'POST', url: '/api/callbutton/press', headers: { authorization: `Hub ${w.hubToken}` }, payload: { device_key: w.deviceKey } });
  assert.equal(pressed.statusCode, 200, pressed.body);
  const buttonRequest = pressed.body;
  const headers = { authorization, 'content-type': 'application/json' };
  const staff = { message_id: messageId, channel_id: 'C', claimed_by: 'Mallory', claimed_by_user_id: 'U' };
  const post = (url: string, body: unknown, h: Record<string, string> = headers): Probe => ({ method: 'POST', url, headers: h, payload: JSON.stringify(body) });
  const get = (url: string): Probe => ({ method: 'GET', url, headers: { authorization } });
  const range = 'from=2026-01-01&to=2026-01-31';
  const hubHeaders = { authorization: hub, 'content-type': 'application/json' };
  return [
    ['C0', post('/api/callforhelp/requests', { location_id: w.locationId, option_id: w.optionId })],
    ['C1', post('/api/callforhelp/claim', staff)],
    ['C2', post('/api/callforhelp/on_the_way', staff)],
    ['C3', post('/api/callforhelp/complete', { ...staff, customer_status: 'helped' })],
    ['C4', post('/api/callforhelp/cancel', { message_id: toCancel })],
    ['C5', get(`/api/callforhelp/v1/tracking?message_id=${messageId}`)],
    ['C6', get(`/api/callforhelp/v1/tracking/stream?message_id=${messageId}`)],
    ['C7', get(`/api/callforhelp/requests?location_id=${w.locationId}`)],
    ['C8', get(`/api/callforhelp/requests/stream?location_id=${w.locationId}`)],
    ['B1', post('/api/callbutton/press', { device_key: w.deviceKey }, hubHeaders)],
    ['B2', { method: 'PUT', url: `/api/callbutton/${buttonRequest}`, headers: hubHeaders, payload: JSON.stringify({ device_key: w.deviceKey, update_type: 'close' }) }],
    ['R1', post('/webhooks/incoming/generic', { edgeId: w.edgeId, text: `Hello ${freshId()}`, actor: 'Mallory', process: false })],
    ['R3', get(`/api/radio/transcripts?edge_id=${encodeURIComponent(w.edgeId)}`)],
    ['P1', get(`/api/reports/cfh?location_id=${w.locationId}&${range}`)],
    ['P2', get(`/api/reports/cfh/requests.csv?location_id=${w.locationId}&${range}`)],
    ['P3', get(`/api/reports/lockers?location_id=${w.locationId}&${range}`)],
    ['D1', get(`/api/devices?location_id=${w.locationId}`)],
    ['W1', get(`/api/webhooks/${endpointId}/deliveries`)],
    ['W2', post(`/api/webhooks/deliveries/${deliveryId}/redeliver`, {})],
  ];
}

const STREAMS = new Set(['C6', 'C8']);

test("a token limited to another location of its organization gets, on every operation, exactly what another organization's token gets, and nothing changes", async () => {
  const elsewhere = freshId();
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id: elsewhere, organization_id: w.organizationId, name: 'Another store' }] });
  const limited = await provisionToken(ctx.db, ctx.clock, w.organizationId, [...ALL], { locationIds: [elsewhere] });
  const stranger = await makeWorld(ctx.db, ctx.clock);
  const strangers = await provisionToken(ctx.db, ctx.clock, stranger.organizationId, [...ALL]);
  const theirs = new Map<string, { status: number; code: string }>();
  for (const [op, probe] of await operations(`Bearer ${strangers}`, `Hub ${strangers}`)) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], probe);
    assert.ok(res.statusCode >= 400, `${op}: another organization's token is refused: ${describe(probe)} -> ${res.statusCode} ${res.body}`);
    theirs.set(op, { status: res.statusCode, code: res.json<{ code: string }>().code });
  }
  for (const [op, probe] of await operations(`Bearer ${limited}`, `Hub ${limited}`)) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], probe);
    assert.deepEqual({ status: res.statusCode, code: res.statusCode >= 400 ? res.json<{ code: string }>().code : '' }, theirs.get(op),
      `${op}: as for another organization: ${describe(probe)} -> ${res.body.slice(0, 300)}`);
  }
});

test('the same token limited to the right location does every one of those operations', async () => {
  const limited = await provisionToken(ctx.db, ctx.clock, w.organizationId, [...ALL], { locationIds: [w.locationId] });
  for (const [op, probe] of await operations(`Bearer ${limited}`, `Hub ${limited}`)) {
    if (STREAMS.has(op)) continue; // an accepted stream stays open: tests/cfh/streams.test.ts
    const res = await ctx.app.inject({ method: probe.method, url: probe.url, headers: probe.headers ?? {}, ...(probe.payload === undefined ? {} : { payload: probe.payload }) });
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${op}: ${describe(probe)} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
  }
});
