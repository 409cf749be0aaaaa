// Webhook targets: loopback, link-local (cloud metadata), unique-local and private addresses are
// refused when connecting unless WEBHOOK_ALLOW_PRIVATE=true, whether the URL names the address or
// a host that resolves to it; the rules of addresses, retries and the setting itself.
import assert from 'node:assert/strict';
import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { WebhookConnections } from '../../src/webhooks/connections.ts';
import { postWebhook } from '../../src/webhooks/post.ts';
import { FIRST_RETRY_MS, isPrivateAddress, MAX_RETRY_MS, retryDelayMs, settle, targetUrlProblem } from '../../src/webhooks/rules.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { makeWorld, provisionToken, testApp } from '../support/world.ts';
import { deliverNow, deliveriesOf, provisionEndpoint, Receiver } from './support.ts';

test('by default a receiver on a private address gets nothing: the attempt is refused and logged', async (t) => {
  const ctx = await testApp({ t });
  assert.equal(ctx.config.webhookAllowPrivate, false);
  const w = await makeWorld(ctx.db, ctx.clock);
  const receiver = await Receiver.start(t);
  const port = new URL(receiver.url).port;
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  const urls = [receiver.url, `http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://2130706433:${port}/hook`];
  const endpoints = [];
  for (const url of urls) endpoints.push(await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url, secret: receiver.secret }));
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  await deliverNow(ctx);
  assert.equal(receiver.requests, 0, 'nothing reached the private address');
  for (const [i, endpointId] of endpoints.entries()) {
    const [d] = await deliveriesOf(ctx.app, token, endpointId);
    assert.equal(d?.state, 'pending', urls[i]);
    assert.equal(d?.attempts[0]?.status_code, null);
    assert.match(d?.attempts[0]?.error ?? '', /^refused: .*private address/, `${urls[i]}: ${d?.attempts[0]?.error}`);
  }
});

test('the address is checked when connecting: a host that resolves to loopback is refused, allowed only with the setting', async () => {
  const receiver = await Receiver.start(undefined);
  const url = `http://localhost:${new URL(receiver.url).port}/hook`;
  const target = { url, body: '{}', headers: { 'content-type': 'application/json' } };
  const refused = await postWebhook(target, { timeoutMs: 5_000, connections: new WebhookConnections({ allowPrivate: false, perOrigin: 4 }), bodyCap: 1024 });
  assert.equal(refused.statusCode, null);
  assert.match(refused.error ?? '', /^refused: localhost resolves to a private address/);
  const allowing = new WebhookConnections({ allowPrivate: true, perOrigin: 4 });
  const allowed = await postWebhook(target, { timeoutMs: 5_000, connections: allowing, bodyCap: 1024 });
  allowing.close();
  assert.deepEqual(allowed, { statusCode: 200, error: null, aborted: false });
  assert.equal(receiver.requests, 1);
  await receiver.close();
});

test('a kept connection is reused only to the address checked when it was made; a host that resolves to a private address later gets no new one', async (t) => {
  // No public address can be served here: 127.0.0.1 plays a public one (allowed by this pool's
  // rule), 127.0.0.2 a private one (refused); the host name resolves to one, then the other.
  const hits = { public: 0, private: 0, publicConnections: 0, privateConnections: 0 };
  const listen = async (address: string, port: number, kind: 'public' | 'private') => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits[kind]++;
        res.end('ok');
      });
    });
    server.on('connection', () => hits[kind === 'public' ? 'publicConnections' : 'privateConnections']++);
    await new Promise<void>((resolve) => server.listen(port, address, resolve));
    t.after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return (server.address() as AddressInfo).port;
  };
  const port = await listen('127.0.0.1', 0, 'public');
  await listen('127.0.0.2', port, 'private');
  let resolvesTo = '127.0.0.1';
  let lookups = 0;
  const resolve = ((_host: string, _options: object, callback: (err: null, addresses: { address: string; family: number }[]) => void) => {
    lookups++;
    callback(null, [{ address: resolvesTo, family: 4 }]);
  }) as unknown as typeof dns.lookup;
  const connections = new WebhookConnections({ allowPrivate: false, perOrigin: 4, idleMs: 200, resolve, refused: (a) => a !== '127.0.0.1' });
  t.after(() => connections.close());
  const post = () => postWebhook({ url: `http://hooks.example:${port}/hook`, body: '{}', headers: {} }, { timeoutMs: 5_000, connections, bodyCap: 1024 });
  const delivered = { statusCode: 200, error: null, aborted: false };

  assert.deepEqual(await post(), delivered);
  assert.deepEqual(await post(), delivered);
  assert.deepEqual([hits.public, hits.publicConnections, lookups], [2, 1, 1], 'two attempts, one connection, looked up and checked once');

  resolvesTo = '127.0.0.2';
  // The open connection still goes to 127.0.0.1, the address checked when it was made; a second
  // connection, needed for an attempt at the same time, is looked up again and refused.
  const both = await Promise.all([post(), post()]);
  assert.deepEqual(both.filter((r) => r.statusCode === 200).length, 1);
  assert.match(both.find((r) => r.statusCode !== 200)?.error ?? '', /^refused: hooks\.example resolves to a private address \(127\.0\.0\.2\)/);
  // Once the kept connection is closed for idleness, nothing is left that was checked.
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.match((await post()).error ?? '', /^refused: hooks\.example resolves to a private address/);
  assert.deepEqual([hits.public, hits.publicConnections], [3, 1]);
  assert.deepEqual([hits.private, hits.privateConnections], [0, 0], 'nothing ever reached the private address');
});

test('loopback, link-local, metadata, unique-local, private and CGNAT addresses are private in every form', () => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '169.254.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fc00::1',
    'fd00:ec2::254',
    'fdff:ffff::1',
    'ff02::1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    'not an address',
    '',
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ];
  for (const a of refused) assert.equal(isPrivateAddress(a), true, a);
  for (const a of allowed) assert.equal(isPrivateAddress(a), false, a);
});

test('only http and https URLs without credentials are targets', () => {
  assert.equal(targetUrlProblem('https://example.com/hook'), null);
  assert.equal(targetUrlProblem('http://example.com:8080/x?y=1'), null);
  for (const bad of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'example.com/hook', '', 'https://user:pass@example.com/']) {
    assert.ok(targetUrlProblem(bad) !== null, bad);
  }
});

test('retries: the first within 30 s, doubling with jitter up to an hour, failed a day after the delivery began', () => {
  assert.ok(retryDelayMs(1, 0) >= FIRST_RETRY_MS / 2 && retryDelayMs(1, 0.9999) <= 30_000);
  for (let failures = 1; failures < 40; failures++) {
    const low = retryDelayMs(failures, 0);
    const high = retryDelayMs(failures, 0.9999);
    assert.ok(low <= high && high <= MAX_RETRY_MS && low >= Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1)) / 2);
  }
  const since = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(since.getTime() + ms);
  assert.deepEqual(settle({ statusCode: 204, error: null }, { failures: 3, retrySince: since }, at(1000), 0.5), {
    state: 'delivered',
    nextAttemptAt: null,
    failures: 3,
  });
  assert.equal(settle({ statusCode: 500, error: null }, { failures: 0, retrySince: since }, at(23 * 3600_000), 0.5).state, 'pending');
  assert.equal(settle({ statusCode: 500, error: null }, { failures: 9, retrySince: since }, at(24 * 3600_000), 0.5).state, 'failed');
  assert.equal(settle({ statusCode: 200, error: "the answer's body is too large" }, { failures: 0, retrySince: since }, at(0), 0.5).state, 'pending');
  assert.equal(settle({ statusCode: 302, error: 'redirects are not followed' }, { failures: 0, retrySince: since }, at(0), 0.5).state, 'pending');
});

test('WEBHOOK_ALLOW_PRIVATE is true or false; anything else stops the start naming it', () => {
  assert.equal(loadConfig({}).webhookAllowPrivate, false);
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate, true);
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'FALSE' }).webhookAllowPrivate, false);
  for (const bad of ['yes', '1', 'on', 'treu']) {
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE: bad }),
      (err: Error) => err.message.startsWith('WEBHOOK_ALLOW_PRIVATE: must be true or false'),
    );
  }
});
