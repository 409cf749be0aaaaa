// Kept connections to receivers (src/webhooks/connections.ts): a kept connection that the receiver
// closed as it was reused costs no failed attempt; an origin gets at most its cap of connections;
// an origin unused for a while is forgotten; a failed attempt leaves no connection behind.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { WebhookConnections } from '../../src/webhooks/connections.ts';
import { postWebhook } from '../../src/webhooks/post.ts';
import { Receiver } from './support.ts';

/** A server whose handler decides per request, knowing how many requests its connection carried. */
async function server(t: TestContext, handle: (req: http.IncomingMessage, res: http.ServerResponse, nth: number) => void) {
  const stats = { connections: 0, requests: 0, open: 0, mostOpen: 0 };
  const s = http.createServer((req, res) => {
    const socket = req.socket as typeof req.socket & { served?: number };
    socket.served = (socket.served ?? 0) + 1;
    stats.requests++;
    req.resume();
    req.on('end', () => handle(req, res, socket.served as number));
  });
  s.on('connection', (socket) => {
    stats.connections++;
    stats.mostOpen = Math.max(stats.mostOpen, ++stats.open);
    socket.on('close', () => stats.open--);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, stats };
}

function pool(t: TestContext, opts: Partial<ConstructorParameters<typeof WebhookConnections>[0]> = {}) {
  const connections = new WebhookConnections({ allowPrivate: true, perOrigin: 4, ...opts });
  t.after(() => connections.close());
  return connections;
}

const post = (url: string, connections: WebhookConnections, timeoutMs = 5_000) =>
  postWebhook({ url, body: '{"a":1}', headers: { 'content-type': 'application/json' } }, { timeoutMs, bodyCap: 1024, connections });

const delivered = { statusCode: 200, error: null, aborted: false };

test('a kept connection the receiver closes as it is reused: the request goes again on a new one, one attempt', async (t) => {
  // The second request of every connection is dropped unanswered, as by a receiver whose idle
  // timer fired just as the request arrived.
  const { url, stats } = await server(t, (req, res, nth) => (nth === 2 ? req.socket.destroy() : res.end('ok')));
  const connections = pool(t);
  assert.deepEqual(await post(url, connections), delivered);
  assert.deepEqual(await post(url, connections), delivered);
  assert.deepEqual(stats, { ...stats, connections: 2, requests: 3 });
});

test('a connection that fails otherwise is not tried again, and a new connection is not retried', async (t) => {
  const { url, stats } = await server(t, (req) => req.socket.destroy());
  const connections = pool(t);
  const result = await post(url, connections);
  assert.equal(result.statusCode, null);
  assert.match(result.error ?? '', /ECONNRESET|socket hang up/);
  assert.deepEqual([stats.connections, stats.requests], [1, 1]);
});

test('an origin gets at most its cap of connections; attempts beyond it wait for one', async (t) => {
  const { url, stats } = await server(t, (_req, res) => setTimeout(() => res.end('ok'), 50));
  const connections = pool(t, { perOrigin: 2 });
  const results = await Promise.all(Array.from({ length: 6 }, () => post(url, connections)));
  assert.deepEqual(results, Array(6).fill(delivered));
  assert.deepEqual([stats.mostOpen, stats.connections, stats.requests], [2, 2, 6]);
});

test('the wait for a connection counts in the time limit', async (t) => {
  const { url } = await server(t, (_req, res) => setTimeout(() => res.end('ok'), 300));
  const connections = pool(t, { perOrigin: 1 });
  const [first, second] = await Promise.all([post(url, connections, 450), post(url, connections, 450)]);
  assert.deepEqual(first, delivered);
  assert.match(second?.error ?? '', /no complete answer within 0\.45 s/);
});

test('idle connections are closed, and an origin unused for a while is forgotten', async (t) => {
  const a = await Receiver.start(t);
  const b = await Receiver.start(t);
  const connections = pool(t, { idleMs: 100, forgetMs: 200 });
  assert.deepEqual(await post(a.url, connections), delivered);
  assert.equal(connections.origins, 1);
  await new Promise((resolve) => setTimeout(resolve, 250));
  assert.deepEqual(await post(b.url, connections), delivered);
  assert.equal(connections.origins, 1, 'the first origin was forgotten');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.deepEqual(await post(b.url, connections), delivered);
  assert.equal(b.connections, 2, 'the idle connection was closed: a new one');
});

test('an answer too long or none in time closes its connection; a complete answer (a redirect, a 500) keeps it', async (t) => {
  const receiver = await Receiver.start(t, 'huge');
  const connections = pool(t);
  assert.match((await post(receiver.url, connections)).error ?? '', /over 1024 bytes/);
  receiver.behaviour = 'redirect';
  assert.match((await post(receiver.url, connections)).error ?? '', /redirects are not followed/);
  receiver.behaviour = 'hang';
  assert.match((await post(receiver.url, connections, 200)).error ?? '', /no complete answer/);
  receiver.behaviour = 'status500';
  assert.deepEqual(await post(receiver.url, connections), { statusCode: 500, error: null, aborted: false });
  assert.deepEqual(await post(receiver.url, connections), { statusCode: 500, error: null, aborted: false });
  // huge: the first, closed; the redirect: a second, kept, and the hanging attempt on it closes it;
  // both 500s on a third.
  assert.equal(receiver.connections, 3);
});
