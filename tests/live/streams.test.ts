// Live streams over the event log: a stream hears the changes its location's events record, made
// on this instance or another; it gets a heartbeat comment; it leaves nothing behind when its
// client goes; the app's shutdown ends it.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { App } from '../../src/app.ts';
import { LiveStreams } from '../../src/live/streams.ts';
import type { Db } from '../../src/db/db.ts';
import { recordEvents } from '../support/events.ts';
import { openSse } from '../support/sse.ts';
import { freshId, makeWorld, otherInstanceDb, testApp, type ExtendDeps, type Teardown } from '../support/world.ts';

/** A test route that streams a location's events as `change` events after a `hello`. */
function streamRoute(heartbeatMs?: number) {
  return (app: App, deps: ExtendDeps) => {
    let live = deps.live;
    if (heartbeatMs !== undefined) {
      const own = new LiveStreams({ feed: deps.live.feed, heartbeatMs });
      app.addHook('preClose', async () => own.closeAll());
      live = own;
    }
    app.get<{ Querystring: { location_id: string } }>('/test/live', async (request, reply) => {
      await live.open(request, reply, {
        locationId: Number(request.query.location_id),
        initial: async (sink) => void sink.send('hello', { location_id: Number(request.query.location_id) }),
        onEvents: async (events, sink) => {
          for (const e of events) sink.send('change', { status: e.status, internal_id: e.internal_id });
        },
      });
    });
  };
}

async function listening(t: Teardown, opts: { db?: Db; heartbeatMs?: number } = {}) {
  const ctx = await testApp({ t, ...(opts.db === undefined ? {} : { db: opts.db }), extend: streamRoute(opts.heartbeatMs) });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  return { ...ctx, base: `http://127.0.0.1:${port}` };
}

async function recordChange(db: Db, organizationId: number, locationId: number, status: string, internalId: string): Promise<void> {
  await db.tx((q) => recordEvents(q, [{ type: 'callforhelp', status, organizationId, locationId, internalId, details: {} }], new Date()));
}

test("a stream hears its location's changes made through another instance, and none of another location", async (t) => {
  const writer = await testApp({ t });
  const reader = await listening(t, { db: await otherInstanceDb() });
  const w = await makeWorld(writer.db, writer.clock);
  const stream = await openSse(t, `${reader.base}/test/live?location_id=${w.locationId}`);
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.deepEqual(JSON.parse((await stream.next('hello')).data), { location_id: w.locationId });
  await recordChange(writer.db, w.organizationId, freshId(), 'created', 'elsewhere');
  await recordChange(writer.db, w.organizationId, w.locationId, 'created', 'r-1');
  await recordChange(writer.db, w.organizationId, w.locationId, 'claimed', 'r-1');
  assert.deepEqual(JSON.parse((await stream.next('change')).data), { status: 'created', internal_id: 'r-1' });
  assert.deepEqual(JSON.parse((await stream.next('change')).data), { status: 'claimed', internal_id: 'r-1' });
});

test("a change reaches a stream while an older transaction is still running, and that one's events come when it commits", async (t) => {
  const writer = await testApp({ t });
  const reader = await listening(t, { db: await otherInstanceDb() });
  const w = await makeWorld(writer.db, writer.clock);
  const stream = await openSse(t, `${reader.base}/test/live?location_id=${w.locationId}`);
  await stream.next('hello');
  // An older transaction (it has written an event, so it has its id) stays open meanwhile.
  let finish = () => {};
  const held = new Promise<void>((resolve) => (finish = resolve));
  const older = (await otherInstanceDb()).tx(async (q) => {
    await recordEvents(
      q,
      [{ type: 'callforhelp', status: 'late', organizationId: w.organizationId, locationId: w.locationId, internalId: 'r-0', details: {} }],
      new Date(),
    );
    await held;
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await recordChange(writer.db, w.organizationId, w.locationId, 'created', 'r-1');
    assert.deepEqual(JSON.parse((await stream.next('change')).data), { status: 'created', internal_id: 'r-1' }, 'not held back by the older one');
  } finally {
    finish();
    await older;
  }
  assert.deepEqual(JSON.parse((await stream.next('change')).data), { status: 'late', internal_id: 'r-0' }, 'the older one, once it commits');
});

test('an idle stream gets a heartbeat comment', async (t) => {
  const ctx = await listening(t, { heartbeatMs: 30 });
  const w = await makeWorld(ctx.db, ctx.clock);
  const stream = await openSse(t, `${ctx.base}/test/live?location_id=${w.locationId}`);
  await stream.next('hello');
  const end = Date.now() + 5_000;
  while (!stream.comments.includes('heartbeat') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(stream.comments.includes('heartbeat'), `comments: ${stream.comments.join(', ')}`);
});

test('streams opened and closed leave no listener or open stream behind', async (t) => {
  const ctx = await listening(t);
  const w = await makeWorld(ctx.db, ctx.clock);
  for (let round = 0; round < 5; round++) {
    const streams = await Promise.all(Array.from({ length: 40 }, () => openSse(t, `${ctx.base}/test/live?location_id=${w.locationId}`)));
    await Promise.all(streams.map((s) => s.next('hello')));
    assert.equal(ctx.live.size, 40);
    for (const s of streams) s.close();
    const end = Date.now() + 5_000;
    while ((ctx.live.size > 0 || ctx.feed.listenerCount > 0) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.equal(ctx.live.size, 0, 'no stream left open');
    assert.equal(ctx.feed.listenerCount, 0, 'no listener left behind');
  }
});

test("the app's shutdown ends its open streams, and closing does not wait for their clients", async (t) => {
  const ctx = await listening(t);
  const w = await makeWorld(ctx.db, ctx.clock);
  const stream = await openSse(t, `${ctx.base}/test/live?location_id=${w.locationId}`);
  await stream.next('hello');
  await ctx.app.close();
  await stream.ended;
  assert.equal(ctx.live.size, 0);
});
