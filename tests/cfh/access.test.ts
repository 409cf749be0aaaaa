import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { makeWorld, provisionToken, testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, createRequest, eventKinds, makeCfhWorld, success } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** A token of the organization with the given scopes. */
const tokenWith = (organizationId: number, scopes: ('cfh' | 'radio')[], opts: { revoked?: boolean } = {}) =>
  provisionToken(ctx.db, ctx.clock, organizationId, scopes, opts);

async function everyOperation(client: ReturnType<typeof cfhClient>, locationId: number, optionId: number, messageId: string) {
  return {
    create: await client.create({ location_id: locationId, option_id: optionId }),
    claim: await client.claim(messageId),
    on_the_way: await client.onTheWay(messageId),
    complete: await client.complete(messageId),
    cancel: await client.cancel(messageId),
    track: await client.track(messageId),
  };
}

test("with an invalid bearer token every operation is 401; without any, all but the customer's", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const { message_id } = await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  const revoked = await tokenWith(w.organizationId, ['cfh'], { revoked: true });
  for (const client of [cfhClient(ctx.app, 'not-a-token'), cfhClient(ctx.app, revoked)]) {
    for (const [op, res] of Object.entries(await everyOperation(client, w.locationId, w.optionId, message_id))) {
      assert.equal(res.statusCode, 401, `${op}: ${res.body}`);
      assert.equal(res.json().code, 'unauthorized');
    }
  }
  // No Authorization header at all: the staff steps are 401; cancel and track are the customer's
  // (contract section 9), where the message_id is the credential (an unknown one is 404).
  const customer = cfhClient(ctx.app, null);
  for (const [op, res] of Object.entries(await everyOperation(customer, w.locationId, w.optionId, 'no-such-request'))) {
    if (op === 'cancel' || op === 'track') continue;
    assert.equal(res.statusCode, 401, `${op}: ${res.body}`);
    assert.equal(res.json().code, 'unauthorized');
  }
  assert.equal((await customer.track(message_id)).statusCode, 200);
  assert.equal((await customer.track('no-such-request')).statusCode, 404);
  assert.equal((await customer.cancel('no-such-request')).statusCode, 404);
  const basic = await ctx.app.inject({
    method: 'GET',
    url: `/api/callforhelp/v1/tracking?message_id=${message_id}`,
    headers: { authorization: `Basic ${w.token}` },
  });
  assert.equal(basic.statusCode, 401);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created'], 'nothing happened to the request');
});

test('a token without the cfh scope is refused with 403', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const { message_id } = await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  const radioOnly = cfhClient(ctx.app, await tokenWith(w.organizationId, ['radio']));
  for (const [op, res] of Object.entries(await everyOperation(radioOnly, w.locationId, w.optionId, message_id))) {
    assert.equal(res.statusCode, 403, `${op}: ${res.body}`);
    assert.equal(res.json().code, 'insufficient_scope');
  }
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created']);
});

test("a second organization's token sees another organization's request as not found", async () => {
  const mine = await makeWorld(ctx.db, ctx.clock);
  const theirs = await makeWorld(ctx.db, ctx.clock);
  const { message_id } = await createRequest(cfhClient(ctx.app, mine.token), { location_id: mine.locationId, option_id: mine.optionId });
  const intruder = cfhClient(ctx.app, theirs.token);
  const unknown = await intruder.track('no-such-request');
  for (const res of [
    await intruder.claim(message_id),
    await intruder.onTheWay(message_id),
    await intruder.complete(message_id),
    await intruder.cancel(message_id),
    await intruder.track(message_id),
  ]) {
    assert.equal(res.statusCode, 404, res.body);
    assert.deepEqual(res.json(), unknown.json(), 'the same answer as for a request that does not exist');
  }
  const view = (await cfhClient(ctx.app, mine.token).track(message_id)).json();
  assert.deepEqual([view.cfh_request.is_claimed, view.cfh_request.is_closed], [false, false]);
  assert.equal(success(await cfhClient(ctx.app, mine.token).claim(message_id, ann)), true);
});

test("a request cannot be created at another organization's location or with its option", async () => {
  const mine = await makeWorld(ctx.db, ctx.clock);
  const theirs = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, mine.token);
  const atTheirs = await client.create({ location_id: theirs.locationId, option_id: mine.optionId });
  assert.equal(atTheirs.statusCode, 422, atTheirs.body);
  assert.deepEqual(Object.keys(atTheirs.json().errors).sort(), ['location_id', 'option_id']);
  const theirOption = await client.create({ location_id: mine.locationId, option_id: theirs.optionId });
  assert.equal(theirOption.statusCode, 422, theirOption.body);
  assert.deepEqual(theirOption.json(), {
    message: 'option_id: is not a Call for Help option of this organization and location',
    code: 'validation_failed',
    errors: { option_id: ['is not a Call for Help option of this organization and location'] },
  });
  const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE organization_id = $1', [mine.organizationId]);
  assert.equal(count?.n, 0);
});

test('guessing message_ids or display keys without a credential is held back by the brute-force guard; a valid one never is', async (t) => {
  const guarded = await testApp({ t, failureLimit: { max: 3, windowMs: 60_000 } });
  const w = await makeWorld(guarded.db, guarded.clock);
  const { message_id } = await createRequest(cfhClient(guarded.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  const customer = cfhClient(guarded.app, null);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await customer.track(`guess-${i}-0000000000000000`)).statusCode);
  assert.deepEqual(statuses, [404, 404, 404, 429, 429]);
  const display = await guarded.app.inject({
    method: 'POST',
    url: '/api/callforhelp/displays/guess-0000000000000000000000/requests',
    payload: { option_id: 1 },
  });
  assert.equal(display.statusCode, 429);
  assert.equal((await customer.track(message_id)).statusCode, 200, 'the right message_id is still answered');
});

test("a customer's cancel shows the claimer's name as the location shows it to customers, staff see it in full", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { staff_name_format: 'generic' } });
  const staff = cfhClient(ctx.app, w.token);
  const first = await createRequest(staff, { location_id: w.locationId, option_id: w.optionId });
  success(await staff.claim(first.message_id, { ...ann, claimed_by: 'Ann Smith' }));
  const byCustomer = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/cancel', payload: { message_id: first.message_id } });
  assert.equal(byCustomer.statusCode, 200, byCustomer.body);
  assert.equal(byCustomer.json<{ claimed_by: string | null }>().claimed_by, 'An associate');
  const again = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/cancel', payload: { message_id: first.message_id } });
  assert.equal(again.json<{ claimed_by: string | null }>().claimed_by, 'An associate', 'cancelling again shows no more');
  const second = await createRequest(staff, { location_id: w.locationId, option_id: w.optionId });
  success(await staff.claim(second.message_id, { ...ann, claimed_by: 'Ann Smith' }));
  assert.equal((await staff.cancel(second.message_id)).json<{ claimed_by: string | null }>().claimed_by, 'Ann Smith');
});
