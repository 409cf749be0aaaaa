// /metrics answers only the service's own host names (issue 36, item 11): a page whose name was
// rebound to this host's address (DNS rebinding) sends its own name in Host and is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostNameOf } from '../../src/metrics/routes.ts';
import { testApp, testConfig } from '../support/world.ts';

test('without METRICS_TOKEN, a loopback scrape is answered under loopback names and the public one, not under another name', async () => {
  const ctx = await testApp({ config: testConfig({ PUBLIC_BASE_URL: 'https://store.example.com:8443/' }) });
  const scrape = (host: string) => ctx.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { host } });
  for (const host of ['localhost:3000', '127.0.0.1', '[::1]:3000', 'STORE.example.com:8443']) assert.equal((await scrape(host)).statusCode, 200, host);
  for (const host of ['attacker.example', 'store.example.com.attacker.example', '10.0.0.5']) {
    const res = await scrape(host);
    assert.equal(res.statusCode, 403, host);
    assert.equal(res.json().code, 'forbidden');
  }
});

test('with METRICS_TOKEN and PUBLIC_BASE_URL, another host name is refused even with the token', async () => {
  const token = 'metrics-token-0123456789abcdef';
  const ctx = await testApp({ config: testConfig({ PUBLIC_BASE_URL: 'https://store.example.com', METRICS_TOKEN: token }) });
  const scrape = (host: string) =>
    ctx.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { host, authorization: `Bearer ${token}` } });
  assert.equal((await scrape('store.example.com')).statusCode, 200);
  assert.equal((await scrape('rebound.attacker.example')).statusCode, 403);
});

test("a Host header's name is read without its port, IPv6 in brackets", () => {
  assert.equal(hostNameOf('Store.Example.com:8443'), 'store.example.com');
  assert.equal(hostNameOf('[::1]:3000'), '[::1]');
  assert.equal(hostNameOf(undefined), '');
});
