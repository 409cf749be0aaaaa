import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, createRequest, eventKinds, iso, makeCfhWorld, seconds, SQL_SECONDS, success, worldWithClient } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-04-10T16:20:05.987Z') });
});

test('a customer cancels: is_canceled, is_closed, closed_at = customer_canceled_at in seconds, is_claimed false', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const created = await createRequest(client, { location_id: w.locationId, option_id: w.optionId, display_id: w.displayId });
  assert.equal(success(await client.claim(created.message_id, ann)), true);
  const claimedAt = ctx.clock.now();
  ctx.clock.advance(42_000);
  const canceledAt = ctx.clock.now();
  const res = await client.cancel(created.message_id);
  assert.equal(res.statusCode, 200, res.body);
  const record = res.json();
  assert.equal(record.is_completed, 0);
  assert.deepEqual(record, {
    ...created,
    is_canceled: true,
    is_closed: true,
    closed_at: seconds(canceledAt),
    customer_canceled_at: seconds(canceledAt),
    is_claimed: false,
    // Who had claimed it stays on record.
    claimed_at: iso(claimedAt),
    claimed_by: 'Ann',
    updated_at: iso(canceledAt),
    status: 'cancelled',
  });
  assert.match(record.closed_at, SQL_SECONDS);
  assert.equal(record.closed_at, record.customer_canceled_at);

  const view = (await client.track(created.message_id)).json();
  assert.equal(view.cfh_request.is_canceled, true);
  assert.equal(view.cfh_request.customer_canceled_at, seconds(canceledAt));
  assert.equal(view.show_survey, false);
});

test('cancelling a cancelled request returns it unchanged', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const first = await client.cancel(message_id);
  assert.equal(first.statusCode, 200, first.body);
  ctx.clock.advance(5_000);
  const again = await client.cancel(message_id);
  assert.equal(again.statusCode, 200, again.body);
  assert.deepEqual(again.json(), first.json());
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created', 'canceled']);
});

test('cancelling a completed request is a conflict and changes nothing', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal(success(await client.complete(message_id)), true);
  const before = (await client.track(message_id)).json();
  ctx.clock.advance(1_000);
  const res = await client.cancel(message_id);
  assert.equal(res.statusCode, 409, res.body);
  assert.equal(res.json().code, 'cfh_request_completed');
  assert.equal(typeof res.json().message, 'string');
  assert.deepEqual((await client.track(message_id)).json(), before);
});

test('a cancelled request can no longer be claimed, sent on the way or completed', async () => {
  const { w, client } = await worldWithClient(ctx);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  assert.equal((await client.cancel(message_id)).statusCode, 200);
  assert.equal(success(await client.claim(message_id)), false);
  assert.equal(success(await client.onTheWay(message_id)), false);
  assert.equal(success(await client.complete(message_id)), false);
  const view = (await client.track(message_id)).json();
  assert.deepEqual([view.cfh_request.is_claimed, view.cfh_request.is_on_the_way, view.show_survey], [false, false, false]);
});
