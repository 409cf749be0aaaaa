// Retention (contract section 16) with a one-day window and a manual clock: delivered device
// messages, announcement audio, settled webhook deliveries and events older than the window go,
// in batches; newer ones, unread events and every request and order (what reports read) stay.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { Retention, type RetentionKind } from '../../src/retention/retention.ts';
import { cfhClient, createRequest } from '../cfh/support.ts';
import { edgeKey, playText } from '../radio/support.ts';
import { report, reportWorld } from '../reports/support.ts';
import { countRows } from './support.ts';
import { testApp, withSecret, type TestContext } from '../support/world.ts';
import { fanOut, provisionEndpoint } from '../webhooks/support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-03-01T10:00:00.000Z') });
});

test('a sweep deletes what is older than the window, in batches, counts it, and keeps requests and orders', async () => {
  const w = await reportWorld(ctx);
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: 'https://example.com/hook', secret: 'hook-secret-0123456789' });
  const history = async (orderId: number) => {
    await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
    const order = await ctx.app.inject({
      method: 'POST',
      url: withSecret('/api/lockers/orders'),
      payload: {
        rearload: false,
        locker_id: w.lockerId,
        cabinet_id: w.cabinetIds[orderId - 1],
        order_id: orderId,
        organization_id: w.organizationId,
        location_id: w.locationId,
      },
    });
    assert.equal(order.statusCode, 201, order.body);
    assert.equal(
      (await ctx.app.inject({ method: 'PUT', url: withSecret(`/api/lockers/cabinets/${w.cabinetIds[1]}`), payload: { command: 'open', reason: 'r' } }))
        .statusCode,
      200,
    );
    assert.equal((await playText(ctx.app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: 'Cleanup on aisle five', actor: 'Manager' })).statusCode, 200);
    await fanOut(ctx); // on PostgreSQL the log is read once no older transaction runs
    // What the devices and receivers would have done: acked the messages, taken the deliveries.
    await ctx.db.query(
      `UPDATE device_outbox SET published_at = $1, acked_at = $1 WHERE acked_at IS NULL AND (topic LIKE 'lockers/' || $2 || '/%' OR topic LIKE 'radio/' || $3 || '/%')`,
      [ctx.clock.now(), w.lockerId, w.edgeId],
    );
    await ctx.db.query(`UPDATE webhook_deliveries SET state = 'delivered', next_attempt_at = NULL, delivered_at = $1 WHERE state = 'pending'`, [
      ctx.clock.now(),
    ]);
  };
  await history(1); // old: 2026-03-01
  // A job that ran then, and one still waiting from then: only the finished one goes.
  await ctx.db.query(`INSERT INTO jobs (kind, payload, run_at, done_at) VALUES ('test.ran', '{}', $1, $1), ('test.waits', '{}', $1, NULL)`, [ctx.clock.now()]);
  ctx.clock.set('2026-03-03T10:00:00.000Z');
  await history(2); // within the window

  const before = {
    outbox: await countRows(ctx.db, 'device_outbox WHERE acked_at IS NOT NULL'),
    audio: await countRows(ctx.db, 'radio_audio'),
    deliveries: await countRows(ctx.db, 'webhook_deliveries'),
    events: await countRows(ctx.db, 'events'),
  };
  assert.ok(before.outbox >= 4 && before.audio >= 2 && before.deliveries >= 2 && before.events >= 4, JSON.stringify(before));

  const counted: Partial<Record<RetentionKind, number>> = {};
  const retention = new Retention({
    db: ctx.db,
    clock: ctx.clock,
    retentionDays: 1,
    batchSize: 1,
    countDeleted: (kind, rows) => {
      counted[kind] = (counted[kind] ?? 0) + rows;
    },
    onError: (err) => {
      throw err;
    },
  });
  const cutoff = '2026-03-02T10:00:00.000Z';
  const outboxTotal = await countRows(ctx.db, 'device_outbox');
  const oldBefore = {
    device_messages: await countRows(ctx.db, 'device_outbox WHERE created_at < $1', [cutoff]),
    radio_audio: await countRows(ctx.db, 'radio_audio WHERE created_at < $1', [cutoff]),
    webhook_deliveries: await countRows(ctx.db, 'webhook_deliveries WHERE created_at < $1', [cutoff]),
    events: await countRows(ctx.db, 'events WHERE created_at < $1', [cutoff]),
    jobs: await countRows(ctx.db, 'jobs WHERE done_at < $1', [cutoff]),
  };
  assert.ok(oldBefore.jobs >= 1);
  const waiting = await countRows(ctx.db, 'jobs WHERE done_at IS NULL');
  const deleted = await retention.runNow();
  const nothingElse = { radio_heard: 0, radio_open_requests: 0, display_presses: 0, browser_digests: 0, audit_entries: 0, sign_in_failures: 0, sessions: 0 };
  assert.deepEqual(deleted, { ...oldBefore, ...nothingElse }, 'everything old, batch after batch of one');
  assert.deepEqual(counted, { ...oldBefore, ...nothingElse }, 'counted for /metrics');
  assert.equal(await countRows(ctx.db, 'device_outbox WHERE created_at < $1', [cutoff]), 0);
  assert.equal(await countRows(ctx.db, 'radio_audio WHERE created_at < $1', [cutoff]), 0);
  assert.equal(await countRows(ctx.db, 'events WHERE created_at < $1', [cutoff]), 0);
  assert.equal(await countRows(ctx.db, 'webhook_deliveries WHERE created_at < $1', [cutoff]), 0);
  assert.equal(await countRows(ctx.db, 'jobs WHERE done_at < $1', [cutoff]), 0);
  assert.equal(await countRows(ctx.db, 'jobs WHERE done_at IS NULL'), waiting, 'jobs still to run stay, however old');
  assert.equal(await countRows(ctx.db, 'device_outbox'), outboxTotal - oldBefore.device_messages, 'newer messages stay');
  assert.ok((await countRows(ctx.db, 'events WHERE created_at >= $1', [cutoff])) > 0, 'newer events stay');
  assert.ok((await countRows(ctx.db, 'radio_audio')) > 0);

  assert.equal(await countRows(ctx.db, 'cfh_requests WHERE location_id = $1', [w.locationId]), 2, 'requests are kept');
  assert.equal(await countRows(ctx.db, 'locker_orders WHERE location_id = $1', [w.locationId]), 2, 'orders are kept');
  const p1 = await report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: '2026-03-01', to: '2026-03-03' });
  assert.equal(p1.json().total, 2, p1.body);
  assert.deepEqual(
    await retention.runNow(),
    {
      device_messages: 0,
      radio_audio: 0,
      webhook_deliveries: 0,
      events: 0,
      jobs: 0,
      radio_heard: 0,
      radio_open_requests: 0,
      display_presses: 0,
      browser_digests: 0,
      audit_entries: 0,
      sign_in_failures: 0,
      sessions: 0,
    },
    'nothing more to do',
  );
});

test('events a subscriber has not read yet are kept, however old', async () => {
  const w = await reportWorld(ctx);
  ctx.clock.set('2026-03-05T10:00:00.000Z');
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  ctx.clock.set('2026-03-09T10:00:00.000Z');
  const retention = new Retention({
    db: ctx.db,
    clock: ctx.clock,
    retentionDays: 1,
    countDeleted: () => undefined,
    onError: (err) => {
      throw err;
    },
  });
  await retention.runNow();
  assert.equal(await countRows(ctx.db, `events WHERE location_id = $1`, [w.locationId]), 1, 'not yet read by the webhooks subscriber');
  await fanOut(ctx); // on PostgreSQL the log is read once no older transaction runs
  await retention.runNow();
  assert.equal(await countRows(ctx.db, `events WHERE location_id = $1`, [w.locationId]), 0);
});
