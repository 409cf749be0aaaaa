// No event is lost to a restart or to the loss of an instance: deliveries are rows, a stopped
// service gives its attempts in flight back, a dead instance's claim runs out, and two instances on
// one PostgreSQL database deliver each event once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { openDb, type Db } from '../../src/db/db.ts';
import { EventSubscribers } from '../../src/events/subscribers.ts';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { WEBHOOKS_SUBSCRIBER, webhookFanOut } from '../../src/webhooks/fanout.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { makeWorld, testDb, type World, testDatabaseUrl } from '../support/world.ts';
import { deliveriesOf, fanOut, provisionEndpoint, Receiver, webhookApp, worldWithEndpoint } from './support.ts';

const clock = new ManualClock(new Date());

test('events written before a restart are delivered after it, and an attempt cut short by the stop is made again', async (t) => {
  const { w, receiver, endpointId, token } = await worldWithEndpoint({ db: await testDb(), clock }, t, { behaviour: 'hang' });
  const first = await webhookApp({ clock });
  const client = cfhClient(first.app, w.token);
  await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  await fanOut(first);
  // Its attempt hangs; a second event is committed but not yet handed to the subscribers.
  first.webhooks.start();
  await receiver.waitFor(1);
  await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  await first.app.close();

  receiver.behaviour = 'ok';
  const second = await webhookApp({ clock, t });
  await fanOut(second);
  await second.webhooks.runDue();
  const uuids = receiver.received.map((r) => r.body.uuid);
  assert.equal(new Set(uuids).size, 2, 'both events arrived');
  const deliveries = await deliveriesOf(second.app, token, endpointId);
  assert.deepEqual(
    deliveries.map((d) => d.state),
    ['delivered', 'delivered'],
  );
  assert.equal(deliveries[1]?.attempts.length, 1, 'the attempt cut short by the stop was given back, not logged as failed');
});

/** A service, an endpoint and four events of one store, fanned out to their deliveries. */
async function oneStoresFourEvents(t: Parameters<typeof Receiver.start>[0], behaviour: Parameters<typeof Receiver.start>[1]) {
  const { w, receiver, endpointId, token } = await worldWithEndpoint({ db: await testDb(), clock }, t, { behaviour });
  const ctx = await webhookApp({ clock, t });
  const client = cfhClient(ctx.app, w.token);
  for (let n = 0; n < 4; n++) await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  await fanOut(ctx);
  return { ctx, receiver, endpointId, token };
}

/** The deliverer of another instance on the same database (60 s leases), which polls only when asked. */
function otherInstance(t: { after: (fn: () => Promise<void>) => void }, db: Db): WebhookDeliverer {
  const deliverer = new WebhookDeliverer({ db, clock, allowPrivate: true, leaseMs: 60_000, pollMs: 3_600_000 });
  t.after(() => deliverer.stop());
  return deliverer;
}

test("a dead instance's run is claimed again once one lease has run out, however long the run", async (t) => {
  const { ctx, receiver, endpointId, token } = await oneStoresFourEvents(t, 'hang');
  // It claims once (its poll would otherwise claim the store again once its leases run out).
  otherInstance(t, ctx.db).start();
  await receiver.waitFor(1);
  // The instance is gone (it never records anything): nobody else may claim the store's
  // deliveries until their leases end, all of them one lease after the claim.
  await ctx.webhooks.runDue();
  assert.equal(receiver.requests, 1, 'one attempt in flight per store');
  receiver.behaviour = 'ok';
  clock.advance(61_000);
  await ctx.webhooks.runDue();
  const uuids = receiver.received.map((r) => r.body.uuid);
  assert.equal(uuids.length, 5, 'the first event again, then the other three');
  assert.deepEqual(uuids.slice(1), [...new Set(uuids)], 'in the order they were written');
  const deliveries = await deliveriesOf(ctx.app, token, endpointId);
  assert.deepEqual(
    deliveries.map((d) => d.state),
    ['delivered', 'delivered', 'delivered', 'delivered'],
  );
});

test('a run that outlasts its lease renews it as it goes: no other instance takes its store meanwhile', async (t) => {
  const { ctx, receiver, endpointId, token } = await oneStoresFourEvents(t, { delayMs: 300 });
  const run = otherInstance(t, ctx.db).runDue();
  await receiver.waitFor(1);
  // Each answer takes long on the service's clock: past half the lease before the second attempt,
  // past the first lease before the third. Another instance claims nothing of the store.
  clock.advance(40_000);
  await receiver.waitFor(2);
  clock.advance(55_000);
  assert.equal(await ctx.webhooks.runDue(), 0, "the store is still the run's");
  assert.equal(await run, 4);
  const uuids = receiver.received.map((r) => r.body.uuid);
  assert.equal(uuids.length, 4, 'each event once');
  assert.equal(new Set(uuids).size, 4);
  const deliveries = await deliveriesOf(ctx.app, token, endpointId);
  assert.deepEqual(
    deliveries.map((d) => [d.state, d.attempts.length]),
    Array(4).fill(['delivered', 1]),
  );
});

test('a run that stalled past its lease stops: what another instance claimed meanwhile is sent once, by it', async (t) => {
  const { ctx, receiver, endpointId, token } = await oneStoresFourEvents(t, { delayMs: 300 });
  const run = otherInstance(t, ctx.db).runDue();
  await receiver.waitFor(1);
  // Its first attempt outlasts the whole lease on the service's clock: the store is free to claim.
  clock.advance(61_000);
  const takenOver = ctx.webhooks.runDue();
  await run;
  assert.ok((await takenOver) >= 3, 'the other instance claimed the store and sent the rest');
  const uuids = receiver.received.map((r) => r.body.uuid);
  const deliveries = await deliveriesOf(ctx.app, token, endpointId);
  assert.deepEqual(
    deliveries.map((d) => d.state),
    ['delivered', 'delivered', 'delivered', 'delivered'],
  );
  // The first event may arrive twice (in flight when the lease ran out: at least once); no other does.
  const later = uuids.filter((u) => u !== uuids[0]);
  assert.equal(later.length, 3, `the other three once each: ${uuids.length} requests`);
  assert.equal(new Set(later).size, 3);
});

async function secondHandle(): Promise<Db> {
  return openDb({ url: await testDatabaseUrl(), poolSize: 5 });
}

test("two instances deliver each event once, each store's in order", async (t) => {
  const db = await testDb();
  const other = await secondHandle();
  t.after(() => other.close());
  const worlds: World[] = [];
  const receiver = await Receiver.start(t);
  for (let i = 0; i < 3; i++) {
    const w = await makeWorld(db, clock);
    worlds.push(w);
    await provisionEndpoint(db, clock, { organizationId: w.organizationId, url: receiver.url, secret: receiver.secret });
  }
  const instances = [db, other].map((handle) => {
    const events = new EventSubscribers({ db: handle, pollMs: 50 });
    events.register(WEBHOOKS_SUBSCRIBER, webhookFanOut({ clock }));
    const webhooks = new WebhookDeliverer({ db: handle, clock, allowPrivate: true, pollMs: 50 });
    return { events, webhooks };
  });
  for (const i of instances) {
    i.events.start();
    i.webhooks.start();
    t.after(async () => {
      await i.events.stop();
      await i.webhooks.stop();
    });
  }
  const ctx = await webhookApp({ clock, t });
  await Promise.all(
    worlds.map(async (w) => {
      const client = cfhClient(ctx.app, w.token);
      for (let n = 0; n < 10; n++) await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    }),
  );
  await receiver.waitFor(30, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(receiver.requests, 30, 'no event twice');
  assert.equal(new Set(receiver.received.map((r) => r.body.uuid)).size, 30);
  assert.ok(receiver.received.every((r) => r.signed));
  for (const w of worlds) {
    const ids = receiver.received.filter((r) => r.body.internal_location_id === w.locationId).map((r) => r.body.internal_id as number);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      "a store's events in the order they were written",
    );
  }
});
