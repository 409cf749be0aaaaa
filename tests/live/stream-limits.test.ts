// How many streams one client may hold open: an address beyond its limit is refused with 429
// too_many_streams in the contract's body and Retry-After, and gets its room back when one closes;
// streams opened with only a capability have their own, smaller room.
// (The service's limit is STREAM_LIMITS.perClient = 500: a store's phones share one address.)
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { LiveStreams } from '../../src/live/streams.ts';
import { openSse } from '../support/sse.ts';
import { testApp } from '../support/world.ts';

test('an address over its stream limit is refused with 429 too_many_streams until one of its streams closes', async (t) => {
  let live: LiveStreams | null = null;
  const ctx = await testApp({
    t,
    extend: (app, deps) => {
      const own = new LiveStreams({ feed: deps.live.feed, limits: { perClient: 2 } });
      live = own;
      app.addHook('preClose', async () => own.closeAll());
      app.get('/test/limited', async (request, reply) => {
        await own.open(request, reply, { locationId: 1, onEvents: async () => {} });
      });
    },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/test/limited`;
  const first = await openSse(t, url);
  const second = await openSse(t, url);
  assert.deepEqual([first.status, second.status], [200, 200]);
  const refused = await fetch(url);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '30');
  const body = (await refused.json()) as { code: string; message: string };
  assert.equal(body.code, 'too_many_streams');
  assert.equal(typeof body.message, 'string');
  first.close();
  for (let i = 0; i < 500 && (live as LiveStreams | null)?.size !== 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal((live as LiveStreams | null)?.size, 1, 'the closed stream ended on the server');
  const again = await openSse(t, url);
  assert.equal(again.status, 200, 'room came back once a stream closed');
});

test("an instance's capability streams stop at their own limit; streams with a credential still open", async (t) => {
  let live: LiveStreams | null = null;
  const ctx = await testApp({
    t,
    extend: (app, deps) => {
      const own = new LiveStreams({ feed: deps.live.feed, limits: { capabilityTotal: 2 } });
      live = own;
      app.addHook('preClose', async () => own.closeAll());
      app.get<{ Querystring: { capability?: string } }>('/test/limited', async (request, reply) => {
        const { capability } = request.query;
        await own.open(request, reply, { locationId: 1, onEvents: async () => {}, ...(capability === undefined ? {} : { capability }) });
      });
    },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/test/limited`;
  assert.equal((await openSse(t, `${url}?capability=a`)).status, 200);
  assert.equal((await openSse(t, `${url}?capability=b`)).status, 200);
  assert.equal((await fetch(`${url}?capability=c`)).status, 429, 'a third capability, from anywhere');
  assert.equal((await openSse(t, url)).status, 200, 'a credential stream');
  assert.equal((live as LiveStreams | null)?.size, 3);
});

test('a burst of opens at once, while the instance places its first subscription, gets no more than the limit', async (t) => {
  const ctx = await testApp({
    t,
    extend: (app, deps) => {
      const own = new LiveStreams({ feed: deps.live.feed, limits: { perCapability: 2 } });
      app.addHook('preClose', async () => own.closeAll());
      app.get('/test/limited', async (request, reply) => {
        await own.open(request, reply, { locationId: 1, onEvents: async () => {}, capability: 'one-request' });
      });
    },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/test/limited`;
  const answers = await Promise.all(Array.from({ length: 10 }, () => openSse(t, url)));
  assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, ...Array<number>(8).fill(429)]);
});
