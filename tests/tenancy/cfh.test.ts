// Tenancy and credentials on Call for Help: another organization's token finds nothing (404, the
// same answer as for a request that does not exist) and changes nothing; expired and revoked
// tokens are 401; a token without the cfh scope is 403.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describe, probeRefusesCleanly, type Probe } from '../support/contract.ts';
import { openCfhRequest } from '../support/requests.ts';
import { freshId, makeWorld, provisionToken, testApp, type TestContext, type World } from '../support/world.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { addLocation, makeCfhWorld } from '../cfh/support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** C0-C5 aimed at world `w`'s request `messageId`, with the given Authorization header. */
function operations(w: World, messageId: string, authorization: string | null): [string, Probe][] {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization === null ? {} : { authorization }) };
  const staff = { message_id: messageId, channel_id: 'C', claimed_by: 'Mallory', claimed_by_user_id: 'U-mallory' };
  const post = (path: string, body: unknown): Probe => ({ method: 'POST', url: `/api/callforhelp/${path}`, headers, payload: JSON.stringify(body) });
  return [
    ['C0', post('requests', { location_id: w.locationId, option_id: w.optionId })],
    ['C1', post('claim', staff)],
    ['C2', post('on_the_way', staff)],
    ['C3', post('complete', { ...staff, customer_status: 'not_interested' })],
    ['C4', post('cancel', { message_id: messageId })],
    ['C5', { method: 'GET', url: `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(messageId)}`, headers }],
  ];
}

test("another organization's token: every operation on this organization's request is 404, answered as for no request at all, and changes nothing", async () => {
  const victim = await makeWorld(ctx.db, ctx.clock);
  const intruder = await makeWorld(ctx.db, ctx.clock);
  const messageId = await openCfhRequest(ctx.app, victim);
  const missing = new Map(
    await Promise.all(
      operations(victim, 'no-such-request-0000000', `Bearer ${intruder.token}`).map(
        async ([op, probe]) =>
          [op, (await ctx.app.inject({ method: probe.method, url: probe.url, headers: probe.headers, payload: probe.payload })).body] as const,
      ),
    ),
  );
  for (const [op, probe] of operations(victim, messageId, `Bearer ${intruder.token}`)) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [victim], probe);
    if (op === 'C0') {
      // C0 names the location: another organization's location is not one of the token's.
      assert.equal(res.statusCode, 422, describe(probe));
      assert.deepEqual(Object.keys(res.json<{ errors: object }>().errors).sort(), ['location_id', 'option_id']);
      continue;
    }
    assert.equal(res.statusCode, 404, `${op}: ${describe(probe)}`);
    assert.equal(res.body, missing.get(op), `${op}: the same answer as for a request that does not exist`);
  }
  const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE organization_id = $1', [intruder.organizationId]);
  assert.equal(count?.n, 0, "the intruder's organization got no request either");
});

test('an expired token is 401 on every operation from the instant it expires, and changes nothing', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const messageId = await openCfhRequest(ctx.app, w);
  const expiresAt = new Date(ctx.clock.now().getTime() + 60_000);
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'], { expiresAt });
  const track = operations(w, messageId, `Bearer ${token}`).find(([op]) => op === 'C5')?.[1] as Probe;
  assert.equal((await probeRefusesCleanly(ctx.app, ctx.db, [w], track)).statusCode, 200, 'valid before it expires');
  ctx.clock.set(expiresAt);
  for (const [op, probe] of operations(w, messageId, `Bearer ${token}`)) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], probe);
    assert.equal(res.statusCode, 401, `${op}: ${describe(probe)}`);
    assert.equal(res.json<{ code: string }>().code, 'unauthorized');
  }
});

test('a revoked token, a token of no one, a missing or malformed Authorization header: 401 on every operation, nothing changes', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const messageId = await openCfhRequest(ctx.app, w);
  const revoked = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh', 'radio'], { revoked: true });
  const headers = [
    `Bearer ${revoked}`,
    null,
    '',
    'Bearer',
    'Bearer ',
    `Basic ${w.token}`,
    `Token ${w.token}`,
    `Bearer${w.token}`,
    `Bearer ${w.token}x`,
    `Bearer ${w.token.slice(1)}`,
    `Bearer ${w.lockerKey}`,
    `Bearer ${w.edgeKey}`,
    `Bearer ${w.authToken}`,
    `Bearer ${w.token} ${w.token}`,
  ];
  for (const authorization of headers) {
    for (const [op, probe] of operations(w, messageId, authorization)) {
      // No Authorization header at all on C4 and C5 is the customer's access (contract section 9:
      // the message_id is the credential); tests/cfh/access.test.ts covers it.
      if (authorization === null && (op === 'C4' || op === 'C5')) continue;
      const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], probe);
      assert.equal(res.statusCode, 401, `${op}: ${describe(probe)}`);
    }
  }
});

test('a token without the cfh scope is 403 on every operation, nothing changes', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const messageId = await openCfhRequest(ctx.app, w);
  const radioOnly = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['radio']);
  for (const [op, probe] of operations(w, messageId, `Bearer ${radioOnly}`)) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [w], probe);
    assert.equal(res.statusCode, 403, `${op}: ${describe(probe)}`);
    assert.equal(res.json<{ code: string }>().code, 'insufficient_scope');
  }
});

test("a request created with one organization's token is that organization's, whatever ids the body names", async () => {
  const mine = await makeWorld(ctx.db, ctx.clock);
  const theirs = await makeWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${mine.token}` },
    payload: { location_id: mine.locationId, option_id: mine.optionId, organization_id: theirs.organizationId },
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json<{ organization_id: number }>().organization_id, mine.organizationId, 'organization_id comes from the token, never the body');
});

test("C0 naming another organization's or another location's call button or display is 422 and stores nothing (issue 36, item 2)", async () => {
  const mine = await makeCfhWorld(ctx.db, ctx.clock);
  const theirs = await makeCfhWorld(ctx.db, ctx.clock);
  const second = await addLocation(ctx.db, ctx.clock, mine);
  const nextDoor = freshId();
  const nextDoorOption = freshId();
  await applyProvisioning(ctx.db, ctx.clock, {
    cfh_options: [
      {
        id: nextDoorOption,
        organization_id: mine.organizationId,
        location_id: second,
        text_en: 'Help',
        text_fr: 'Aide',
        prompt_en: 'Coming',
        prompt_fr: 'On arrive',
      },
    ],
    call_buttons: [{ id: nextDoor, location_id: second, name: 'Next door', device_key: 'AA:BB:CC:00:11:22', option_id: nextDoorOption }],
  });
  const limited = await provisionToken(ctx.db, ctx.clock, mine.organizationId, ['cfh'], { locationIds: [mine.locationId] });
  const create = (token: string, extra: Record<string, number>) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${token}` },
      payload: { location_id: mine.locationId, option_id: mine.optionId, ...extra },
    });
  const cases: [string, Record<string, number>, string][] = [
    ["another organization's button", { callbutton_id: theirs.buttonId }, 'callbutton_id'],
    ["another organization's display", { display_id: theirs.displayId }, 'display_id'],
    ["another location's button, with a token of this location", { callbutton_id: nextDoor }, 'callbutton_id'],
    ['a button that does not exist', { callbutton_id: freshId() }, 'callbutton_id'],
  ];
  for (const [what, extra, field] of cases) {
    for (const token of [mine.token, limited]) {
      const res = await create(token, extra);
      assert.equal(res.statusCode, 422, what);
      assert.deepEqual(Object.keys(res.json().errors), [field], what);
    }
  }
  const [stored] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE location_id = $1', [mine.locationId]);
  assert.equal(stored?.n, 0);
  const own = await create(mine.token, { callbutton_id: mine.buttonId, display_id: mine.displayId });
  assert.equal(own.statusCode, 201, own.body);
  // The database holds it too: no statement can give a request another location's button.
  await assert.rejects(
    ctx.db.query('UPDATE cfh_requests SET callbutton_id = $1 WHERE location_id = $2', [theirs.buttonId, mine.locationId]),
    /cfh_requests_callbutton/,
  );
});
