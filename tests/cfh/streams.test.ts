// C6 and C8: Server-Sent Events of a request's status and of a location's requests, delivered from
// whichever instance made the change, with no listener left behind.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { openSse } from '../support/sse.ts';
import { otherInstanceDb, provisionToken, testApp, type Teardown } from '../support/world.ts';
import { addLocation, ann, cfhClient, makeCfhWorld, success } from './support.ts';

async function listening(t: Teardown, db?: Db) {
  const ctx = await testApp({ t, ...(db === undefined ? {} : { db }) });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  return { ...ctx, base: `http://127.0.0.1:${port}` };
}

test("C6: a customer's stream (no token) gets the status at once and after a claim made through another instance", async (t) => {
  const a = await testApp({ t });
  const b = await listening(t, await otherInstanceDb());
  const w = await makeCfhWorld(a.db, a.clock, { settings: { staff_name_format: 'first' } });
  const staff = cfhClient(a.app, w.token);
  const { message_id } = (await staff.create({ location_id: w.locationId, option_id: w.optionId })).json();
  const stream = await openSse(t, `${b.base}/api/callforhelp/v1/tracking/stream?message_id=${message_id}`);
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  const first = JSON.parse((await stream.next('status')).data);
  assert.equal(first.cfh_request.status, 'created');
  assert.equal(success(await staff.claim(message_id, { ...ann, claimed_by: 'Ann Smith' })), true);
  const claimed = JSON.parse((await stream.next('status')).data);
  assert.deepEqual([claimed.cfh_request.status, claimed.cfh_request.claimed_by], ['claimed', 'Ann'], 'first name only, for a customer');
  assert.equal(success(await staff.onTheWay(message_id, { ...ann, claimed_by: 'Ann Smith' })), true);
  assert.equal(JSON.parse((await stream.next('status')).data).cfh_request.status, 'on_the_way');
});

test("C6 with a cfh token shows the claimer in full; unknown message_id and another organization's token are 404", async (t) => {
  const ctx = await listening(t);
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { staff_name_format: 'generic' } });
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  const staff = cfhClient(ctx.app, w.token);
  const { message_id } = (await staff.create({ location_id: w.locationId, option_id: w.optionId })).json();
  assert.equal(success(await staff.claim(message_id, { ...ann, claimed_by: 'Ann Smith' })), true);
  const withToken = await openSse(t, `${ctx.base}/api/callforhelp/v1/tracking/stream?message_id=${message_id}`, { authorization: `Bearer ${w.token}` });
  assert.equal(JSON.parse((await withToken.next('status')).data).cfh_request.claimed_by, 'Ann Smith');
  const customer = await openSse(t, `${ctx.base}/api/callforhelp/v1/tracking/stream?message_id=${message_id}`);
  assert.equal(JSON.parse((await customer.next('status')).data).cfh_request.claimed_by, 'An associate');
  const unknown = await fetch(`${ctx.base}/api/callforhelp/v1/tracking/stream?message_id=nope`);
  assert.equal(unknown.status, 404);
  const theirs = await fetch(`${ctx.base}/api/callforhelp/v1/tracking/stream?message_id=${message_id}`, {
    headers: { authorization: `Bearer ${other.token}` },
  });
  assert.equal(theirs.status, 404);
});

test("C8: a location's stream on instance B hears each change made on instance A, with the record and staff_action", async (t) => {
  const a = await testApp({ t });
  const b = await listening(t, await otherInstanceDb());
  const w = await makeCfhWorld(a.db, a.clock);
  const stream = await openSse(t, `${b.base}/api/callforhelp/requests/stream?location_id=${w.locationId}`, { authorization: `Bearer ${w.token}` });
  assert.equal(stream.status, 200);
  const staff = cfhClient(a.app, w.token);
  const { message_id } = (await staff.create({ location_id: w.locationId, option_id: w.optionId })).json();
  const created = JSON.parse((await stream.next('request')).data);
  assert.deepEqual([created.message_id, created.status, created.staff_action], [message_id, 'created', 'claim_and_on_the_way']);
  assert.equal(success(await staff.claim(message_id)), true);
  const claimed = JSON.parse((await stream.next('request')).data);
  assert.deepEqual([claimed.message_id, claimed.status, claimed.claimed_by], [message_id, 'claimed', 'Ann']);
});

test("C8 refuses another organization's location, a token limited to other locations, and no token", async (t) => {
  const ctx = await listening(t);
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  const url = `${ctx.base}/api/callforhelp/requests/stream?location_id=${w.locationId}`;
  assert.equal((await fetch(url)).status, 401);
  assert.equal((await fetch(url, { headers: { authorization: `Bearer ${other.token}` } })).status, 404);
  const limited = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'], { locationIds: [await addLocation(ctx.db, ctx.clock, w)] });
  assert.equal((await fetch(url, { headers: { authorization: `Bearer ${limited}` } })).status, 404);
  assert.equal(ctx.live.size, 0);
});

test('1,000 streams opened and closed leave no stream, listener or handle behind', async (t) => {
  const ctx = await listening(t);
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  // Customers' streams: 50 per round, five on each of ten requests (the limits of one address).
  const messageIds: string[] = [];
  for (let i = 0; i < 10; i++)
    messageIds.push((await cfhClient(ctx.app, w.token).create({ location_id: w.locationId, option_id: w.optionId })).json().message_id);
  const settle = async () => {
    const end = Date.now() + 10_000;
    while ((ctx.live.size > 0 || ctx.feed.listenerCount > 0) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  };
  const handles = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
  const connections = () => new Promise<number>((resolve, reject) => ctx.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  const closed = async () => {
    const end = Date.now() + 10_000;
    while ((await connections()) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return connections();
  };
  let before = -1;
  for (let round = 0; round < 10; round++) {
    const streams = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0
          ? openSse(t, `${ctx.base}/api/callforhelp/v1/tracking/stream?message_id=${messageIds[(i / 2) % 10]}`)
          : openSse(t, `${ctx.base}/api/callforhelp/requests/stream?location_id=${w.locationId}`, { authorization: `Bearer ${w.token}` }),
      ),
    );
    await Promise.all(streams.filter((_, i) => i % 2 === 0).map((s) => s.next('status')));
    assert.equal(ctx.live.size, 100);
    for (const s of streams) s.close();
    await Promise.all(streams.map((s) => s.ended));
    await settle();
    assert.equal(ctx.live.size, 0, 'no stream left open');
    assert.equal(ctx.feed.listenerCount, 0, 'no listener left behind');
    assert.equal(await closed(), 0, "every stream's connection closed");
    // The database pool's connections (a socket and an idle timer each) grow with the load, up to
    // its size, so the process's count is held to a margin far below one round's 100 streams.
    if (round === 1) before = handles();
    if (round > 1) assert.ok(handles() <= before + 50, `handles: ${handles()} after round ${round}, ${before} after round 1`);
  }
});

/** The database, counting the statements sent through it that contain `marker`. */
function counting(db: Db, marker: string): { db: Db; count: () => number } {
  let n = 0;
  const proxy = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === 'query') {
        return (text: string, params?: readonly unknown[]) => {
          if (text.includes(marker)) n++;
          return target.query(text, params);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: proxy, count: () => n };
}

test("C8: the streams of a location read a change's record once between them, and each gets it", async (t) => {
  const a = await testApp({ t });
  // Instance B's reads of a request record with its staff_action (the C8 record) are counted.
  const counted = counting(await otherInstanceDb(), 'o.staff_action FROM cfh_requests r');
  const b = await listening(t, counted.db);
  const w = await makeCfhWorld(a.db, a.clock);
  const streams = await Promise.all(
    Array.from({ length: 20 }, () =>
      openSse(t, `${b.base}/api/callforhelp/requests/stream?location_id=${w.locationId}`, { authorization: `Bearer ${w.token}` }),
    ),
  );
  const before = counted.count();
  const { message_id } = (await cfhClient(a.app, w.token).create({ location_id: w.locationId, option_id: w.optionId })).json();
  for (const stream of streams) {
    const record = JSON.parse((await stream.next('request')).data);
    assert.deepEqual([record.message_id, record.status], [message_id, 'created']);
  }
  assert.equal(counted.count() - before, 1, 'one read for the twenty streams');
});
