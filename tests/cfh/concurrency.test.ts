// Races between employees (and a customer). They run on both backends; only PostgreSQL runs the
// requests truly at once (PGlite has one connection), so there the database's guards are proven.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { listEvents } from '../../src/cfh/store.ts';
import { makeWorld, testApp, type TestContext } from '../support/world.ts';
import { cfhClient, createRequest, success, type Employee } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

const employee = (i: number): Employee => ({ channel_id: 'C-floor', claimed_by: `Employee ${i}`, claimed_by_user_id: `U-${i}`, request_from: 'provider_c' });

test(`of 20 concurrent claims exactly one succeeds`, async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  for (let round = 0; round < 3; round++) {
    const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => client.claim(message_id, employee(i))));
    const winners = results.flatMap((res, i) => (success(res) ? [i] : []));
    assert.equal(winners.length, 1, `winners: ${winners.join(', ')}`);
    const view = (await client.track(message_id)).json().cfh_request;
    assert.equal(view.claimed_by, `Employee ${winners[0]}`, 'the request names the one who won');
    const claims = (await listEvents(ctx.db, w.organizationId, message_id)).filter((e) => e.kind === 'claimed');
    assert.deepEqual(
      claims.map((e) => e.actor_user_id),
      [`U-${winners[0]}`],
    );
  }
});

test('claims and on-the-ways racing on an unclaimed request leave it with one employee', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? client.claim(message_id, employee(i)) : client.onTheWay(message_id, employee(i)))),
  );
  const winners = results.flatMap((res, i) => (success(res) ? [i] : []));
  assert.equal(winners.length, 1, `winners: ${winners.join(', ')}`);
  const view = (await client.track(message_id)).json().cfh_request;
  assert.equal(view.claimed_by, `Employee ${winners[0]}`);
  assert.equal(view.is_on_the_way, (winners[0] ?? 0) % 2 === 1);
});

test('a cancel racing a completion: exactly one of them takes effect', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  for (let round = 0; round < 5; round++) {
    const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    const [canceled, completed] = await Promise.all([client.cancel(message_id), client.complete(message_id, 'helped', employee(1))]);
    const completionWon = success(completed);
    if (completionWon) {
      assert.equal(canceled.statusCode, 409, canceled.body);
    } else {
      assert.equal(canceled.statusCode, 200, canceled.body);
      assert.equal(canceled.json().is_canceled, true);
    }
    const view = (await client.track(message_id)).json();
    assert.deepEqual([view.show_survey, view.cfh_request.is_canceled], [completionWon, !completionWon]);
    const closing = (await listEvents(ctx.db, w.organizationId, message_id)).filter((e) => e.kind === 'canceled' || e.kind === 'completed');
    assert.equal(closing.length, 1);
  }
});

test('a claim racing the timeout either claims or finds it timed out, never both', async () => {
  const w = await makeWorld(ctx.db, ctx.clock, { cfhTimeoutSeconds: 1 });
  const client = cfhClient(ctx.app, w.token);
  const outcomes = new Set<string>();
  for (let round = 0; round < 8; round++) {
    const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    ctx.clock.advance(1_000);
    const [claim] = await Promise.all([client.claim(message_id, employee(round)), ctx.scheduler.runDue()]);
    const claimed = success(claim);
    const view = (await client.track(message_id)).json().cfh_request;
    assert.equal(view.status, claimed ? 'claimed' : 'timed_out');
    assert.deepEqual([view.is_claimed, view.is_timeout, view.is_closed], [claimed, !claimed, !claimed]);
    const kinds = (await listEvents(ctx.db, w.organizationId, message_id)).map((e) => e.kind);
    assert.deepEqual(kinds, ['created', claimed ? 'claimed' : 'timed_out']);
    outcomes.add(view.status);
  }
  assert.ok(outcomes.size >= 1);
});
