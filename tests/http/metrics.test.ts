// GET /metrics (contract section 16): the Prometheus text format, HTTP answers by operationId (never
// by raw URL), the database's figures read at the scrape, and METRICS_TOKEN.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { SNAPSHOT_SECONDS } from '../../src/metrics/routes.ts';
import { makeWorld, testApp, testConfig, type TestContext } from '../support/world.ts';

/** The samples of a Prometheus text exposition: `name{label="value",...} number`, comments skipped. */
function parseProm(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

const valueOf = (samples: ReturnType<typeof parseProm>, name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

async function scrape(c: TestContext = ctx, headers: Record<string, string> = {}) {
  const res = await c.app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  return parseProm(res.body);
}

test('HTTP answers are counted by operationId and status with a latency histogram; unknown routes share one label', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const before = await scrape();
  const createdBefore = valueOf(before, 'storeops_cfh_requests', { status: 'created' }) ?? 0;
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await ctx.app.inject({ method: 'GET', url: '/no/such/path/12345' });
  await ctx.app.inject({ method: 'GET', url: '/no/such/path/67890' });
  ctx.clock.advance(SNAPSHOT_SECONDS * 1000); // the database's figures are read again
  const after = await scrape();
  assert.ok((valueOf(after, 'storeops_http_requests_total', { operation: 'createCfhRequest', status: '201' }) ?? 0) >= 1);
  assert.ok((valueOf(after, 'storeops_http_request_duration_seconds_count', { operation: 'createCfhRequest' }) ?? 0) >= 1);
  assert.ok((valueOf(after, 'storeops_http_requests_total', { operation: 'unmatched', status: '404' }) ?? 0) >= 2);
  assert.ok(!after.some((s) => (s.labels.operation ?? '').includes('12345')), 'no raw URL as a label');
  assert.equal(valueOf(after, 'storeops_cfh_requests', { status: 'created' }), createdBefore + 1, 'CFH by status from the database');
  for (const state of ['queued', 'failed', 'unacked']) assert.equal(typeof valueOf(after, 'storeops_device_messages', { state }), 'number');
  for (const state of ['pending', 'delivered', 'failed']) assert.equal(typeof valueOf(after, 'storeops_webhook_deliveries', { state }), 'number');
  assert.ok((valueOf(after, 'storeops_jobs_lag_seconds') ?? -1) >= 0);
  assert.equal(typeof valueOf(after, 'storeops_devices_connected', { kind: 'locker' }), 'number');
  assert.equal(typeof valueOf(after, 'storeops_speech_synthesis_seconds_count'), 'number');
});

test('with METRICS_TOKEN the scrape needs that bearer token', async (t) => {
  const token = 'metrics-token-0123456789abcdef';
  const guarded = await testApp({ t, config: testConfig({ METRICS_TOKEN: token }) });
  assert.equal((await guarded.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
  assert.equal(
    (await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } })).statusCode,
    401,
  );
  await scrape(guarded, { authorization: `Bearer ${token}` });
});

test('the database is counted once per 15 seconds however often it is scraped; HTTP counters stay live (issue 36, item 9)', async (t) => {
  const own = await testApp({ t });
  const w = await makeWorld(own.db, own.clock);
  const created = (samples: ReturnType<typeof parseProm>) => valueOf(samples, 'storeops_cfh_requests', { status: 'created' }) ?? 0;
  const first = await scrape(own);
  await createRequest(cfhClient(own.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  own.clock.advance(SNAPSHOT_SECONDS * 1000 - 1);
  const soon = await scrape(own);
  assert.equal(created(soon), created(first), 'the same figures within 15 s');
  assert.ok((valueOf(soon, 'storeops_http_requests_total', { operation: 'createCfhRequest', status: '201' }) ?? 0) >= 1, 'HTTP answers are live');
  own.clock.advance(1);
  assert.equal(created(await scrape(own)), created(first) + 1, 'read again after 15 s');
});

test('without METRICS_TOKEN only this host is answered; with it, any host that has the token', async (t) => {
  const open = await testApp({ t });
  const remote = await open.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' });
  assert.equal(remote.statusCode, 403);
  assert.equal(remote.json().code, 'forbidden');
  assert.equal((await open.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' })).statusCode, 200);
  const token = 'metrics-token-0123456789abcdef';
  const guarded = await testApp({ t, config: testConfig({ METRICS_TOKEN: token }) });
  const far = await guarded.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${token}` } });
  assert.equal(far.statusCode, 200);
});
