// C9's limits over HTTP (contract section 9, version 3; issue 36, item 4): the cooldown is the
// customer's browser's, the address (IPv6 by its /64) only bounds how many browsers it brings, a
// display takes at most 10 requests a minute from everyone, and a browser asking again while its
// request is open gets that request back.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, makeCfhWorld, type CfhWorld } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-09-01T08:00:00.000Z') });
});

/** A browser id as the page makes one: 128 random bits, base64url. */
const browserId = () => crypto.randomBytes(16).toString('base64url');

function c9(w: CfhWorld, ip: string, browser?: string, payload: Record<string, unknown> = { option_id: w.optionId }) {
  return ctx.app.inject({
    method: 'POST',
    url: `/api/callforhelp/displays/${w.displayKey}/requests`,
    payload: browser === undefined ? payload : { ...payload, browser_id: browser },
    remoteAddress: ip,
  });
}

async function requestsOf(w: CfhWorld): Promise<number> {
  const [row] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE display_id = $1', [w.displayId]);
  return row?.n ?? 0;
}

test('customers on one guest network each get their request: the cooldown is per browser', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 120 } });
  for (const who of ['first customer', 'second customer', 'third customer']) {
    const res = await c9(w, '203.0.113.7', browserId());
    assert.equal(res.statusCode, 201, `${who}: ${res.body}`);
  }
  assert.equal(await requestsOf(w), 3);
});

test('a browser asking again while its request is open gets that request (200), not a second one nor a 429', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 60 } });
  const me = browserId();
  const first = await c9(w, '203.0.113.8', me);
  assert.equal(first.statusCode, 201, first.body);
  const again = await c9(w, '198.51.100.9', me, { option_id: w.secondOptionId });
  assert.equal(again.statusCode, 200, again.body);
  assert.equal(again.json().message_id, first.json().message_id, 'the open request, whatever was chosen the second time');
  assert.equal(again.json().status, 'created');
  ctx.clock.advance(120_000);
  assert.equal((await c9(w, '203.0.113.8', me)).json().message_id, first.json().message_id, 'still open after the cooldown: still that request');
  assert.equal(await requestsOf(w), 1);

  // Once it is closed, the cooldown decides again.
  assert.equal((await cfhClient(ctx.app, null).cancel(first.json().message_id)).statusCode, 200);
  const next = await c9(w, '203.0.113.8', me);
  assert.equal(next.statusCode, 201, 'the cooldown (60 s) ran out while the request was open');
  assert.equal((await cfhClient(ctx.app, null).cancel(next.json().message_id)).statusCode, 200);
  const soon = await c9(w, '203.0.113.8', me);
  assert.equal(soon.statusCode, 429, soon.body);
  assert.equal(soon.json().code, 'display_cooldown');
  assert.equal(soon.headers['retry-after'], '60');
});

test("a browser's open request given again shows its claimer only as the location shows customers", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { staff_name_format: 'generic' } });
  const me = browserId();
  const first = await c9(w, '203.0.113.10', me);
  assert.equal(first.statusCode, 201, first.body);
  const claim = await cfhClient(ctx.app, w.token).claim(first.json().message_id, { ...ann, claimed_by: 'Ann Smith' });
  assert.equal(claim.statusCode, 200, claim.body);
  const again = await c9(w, '203.0.113.10', me);
  assert.equal(again.statusCode, 200, again.body);
  assert.deepEqual([again.json().status, again.json().claimed_by], ['claimed', 'An associate']);
});

test('two requests of one browser at the same instant make one request', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const me = browserId();
  const answers = await Promise.all([c9(w, '203.0.113.10', me), c9(w, '203.0.113.10', me), c9(w, '203.0.113.11', me)]);
  assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 200, 201], answers.map((a) => a.body).join('\n'));
  assert.equal(new Set(answers.map((a) => a.json().message_id)).size, 1);
  assert.equal(await requestsOf(w), 1);
});

test('one address brings at most 5 browsers per window: rotating browser ids does not keep a display closed', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 120 } });
  for (let i = 0; i < 5; i++) assert.equal((await c9(w, '203.0.113.20', browserId())).statusCode, 201, `browser ${i + 1}`);
  ctx.clock.advance(30_000);
  const sixth = await c9(w, '203.0.113.20', browserId());
  assert.equal(sixth.statusCode, 429, sixth.body);
  assert.equal(sixth.json().code, 'display_cooldown');
  assert.equal(sixth.headers['retry-after'], '90', 'until the oldest of the five leaves the window');
  assert.equal((await c9(w, '198.51.100.20', browserId())).statusCode, 201, 'a customer on another network still gets through');
  ctx.clock.advance(90_000);
  assert.equal((await c9(w, '203.0.113.20', browserId())).statusCode, 201, 'the window moved on');
});

test('IPv6 addresses of one /64 are one address: rotating within it is limited, another /64 is not', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 120 } });
  // Without a browser id, the address alone is the client, as before version 3, but by its /64.
  assert.equal((await c9(w, '2001:db8:aa:1::1')).statusCode, 201);
  const rotated = await c9(w, '2001:0db8:00aa:0001:ffff:1:2:3');
  assert.equal(rotated.statusCode, 429, rotated.body);
  assert.equal(rotated.json().code, 'display_cooldown');
  // With browser ids: the /64 brings at most 5 browsers (the one above counts).
  for (let i = 0; i < 4; i++) assert.equal((await c9(w, `2001:db8:aa:1:${i}::${i + 7}`, browserId())).statusCode, 201, `browser ${i + 2}`);
  assert.equal((await c9(w, '2001:db8:aa:1:9:8:7:6', browserId())).statusCode, 429, 'a sixth browser of the /64');
  assert.equal((await c9(w, '2001:db8:aa:2::1', browserId())).statusCode, 201, 'the next /64 is another client');
  assert.equal((await c9(w, '::ffff:192.0.2.44')).statusCode, 201, 'an IPv4 client on a dual-stack socket is its IPv4 address');
  assert.equal((await c9(w, '192.0.2.44')).statusCode, 429, 'the same IPv4 address');
});

test('a display takes at most 10 requests a minute from everyone (429 display_busy with Retry-After)', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 120 } });
  for (let i = 0; i < 10; i++) {
    assert.equal((await c9(w, `192.0.2.${100 + i}`, browserId())).statusCode, 201, `request ${i + 1}`);
    ctx.clock.advance(2_000);
  }
  const eleventh = await c9(w, '192.0.2.200', browserId());
  assert.equal(eleventh.statusCode, 429, eleventh.body);
  assert.equal(eleventh.json().code, 'display_busy');
  assert.equal(eleventh.headers['retry-after'], '40', 'until the first of the ten is a minute old');
  assert.equal(await requestsOf(w), 10);
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  assert.equal((await c9(other, '192.0.2.200', browserId())).statusCode, 201, 'another display is not held back');
  ctx.clock.advance(40_000);
  assert.equal((await c9(w, '192.0.2.200', browserId())).statusCode, 201, 'a minute after the first');
});

test('a browser id of the wrong shape is 422 on browser_id and creates nothing', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  for (const bad of ['short', 'x'.repeat(65), 'has spaces in it and is long enough', 'a+b/c=d'.repeat(4), 42, null]) {
    const res = await c9(w, '192.0.2.50', bad as string);
    assert.equal(res.statusCode, 422, `${JSON.stringify(bad)}: ${res.body}`);
    assert.equal(res.json().code, 'validation_failed');
    assert.ok('browser_id' in res.json().errors, res.body);
  }
  assert.equal(await requestsOf(w), 0);
});
