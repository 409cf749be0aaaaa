// Call buttons (B1, B2) as their hubs use them: text/plain answers, the cooldown, voltage and
// last-seen, the long press, the hub token with any scheme word.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { provisionToken, testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, eventKinds, makeCfhWorld, press, success } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-07-01T09:00:00.000Z') });
});

test("a press creates a request with the button's option and answers its message_id as text/plain", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const res = await press(ctx.app, w.hubToken, { device_key: w.deviceKey.toLowerCase(), button: 1 }, 'Basic');
  assert.equal(res.statusCode, 200, res.body);
  assert.match(res.headers['content-type'] as string, /^text\/plain/);
  const messageId = res.body;
  assert.match(messageId, /^[A-Za-z0-9_-]{22}$/);
  const view = (await cfhClient(ctx.app, w.token).track(messageId)).json();
  assert.equal(view.option.id, w.optionId);
  assert.equal(view.cfh_request.source, 'call_button');
  assert.equal(view.cfh_request.status, 'created');
  const [record] = await ctx.db.query<{ callbutton_id: number }>('SELECT callbutton_id FROM cfh_requests WHERE message_id = $1', [messageId]);
  assert.equal(record?.callbutton_id, w.buttonId);
  const [event] = await ctx.db.query<{ details: Record<string, unknown> }>(
    "SELECT details FROM events WHERE type = 'callforhelp' AND details->>'message_id' = $1",
    [messageId],
  );
  assert.equal(event?.details.type, 'call_button');
  assert.equal(event?.details.name, 'Paint counter');
  assert.equal(event?.details.request_from, 'call_button');
});

test('any scheme word, or none, carries the hub token; a token without the buttons scope is 403', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 0 } });
  for (const scheme of ['Bearer', 'Token', 'X-Vendor-Auth']) {
    assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey }, scheme)).statusCode, 200, scheme);
  }
  const bare = await ctx.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: w.hubToken },
    payload: { device_key: w.deviceKey },
  });
  assert.equal(bare.statusCode, 200, bare.body);
  const none = await ctx.app.inject({ method: 'POST', url: '/api/callbutton/press', payload: { device_key: w.deviceKey } });
  assert.equal(none.statusCode, 401);
  assert.equal((await press(ctx.app, 'not-a-token', { device_key: w.deviceKey })).statusCode, 401);
  const cfhOnly = await press(ctx.app, w.token, { device_key: w.deviceKey });
  assert.equal(cfhOnly.statusCode, 403);
  assert.equal(cfhOnly.json().code, 'insufficient_scope');
});

test('a press within the cooldown is 429 with Retry-After and the seconds left, and creates nothing', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 120 } });
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200);
  ctx.clock.advance(30_000);
  const again = await press(ctx.app, w.hubToken, { device_key: w.deviceKey });
  assert.equal(again.statusCode, 429, again.body);
  assert.equal(again.headers['retry-after'], '90');
  assert.equal(again.json().message, 'Please wait 90 seconds before sending another request!');
  ctx.clock.advance(90_000);
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200, 'after the cooldown');
  const [{ n }] = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE callbutton_id = $1', [w.buttonId])) as [{ n: number }];
  assert.equal(n, 2);
});

test('without a cooldown of its own, a location waits 120 seconds between presses of a button', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200);
  ctx.clock.advance(119_000);
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).headers['retry-after'], '1');
  ctx.clock.advance(1_000);
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200);
});

test('20 concurrent presses of one button create one request', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const answers = await Promise.all(Array.from({ length: 20 }, () => press(ctx.app, w.hubToken, { device_key: w.deviceKey })));
  assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, ...Array<number>(19).fill(429)]);
  const rows = await ctx.db.query('SELECT 1 FROM cfh_requests WHERE callbutton_id = $1', [w.buttonId]);
  assert.equal(rows.length, 1, 'truly concurrent');
});

test('voltage reports: button 0 records the voltage only; last-seen and voltage show in D1; battery_low once below 2.4 V', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const report = await press(ctx.app, w.hubToken, { device_key: w.deviceKey, voltage: 2.9, button: 0 });
  assert.equal(report.statusCode, 200);
  assert.equal(report.body, 'Voltage updated successfully');
  const zero = await press(ctx.app, w.hubToken, { device_key: w.deviceKey, button: 0 });
  assert.equal(zero.body, 'Button value is 0, no action taken');
  assert.equal((await ctx.db.query('SELECT 1 FROM cfh_requests WHERE callbutton_id = $1', [w.buttonId])).length, 0);

  const devicesToken = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['devices']);
  const d1 = await ctx.app.inject({ url: `/api/devices?location_id=${w.locationId}`, headers: { authorization: `Bearer ${devicesToken}` } });
  const button = d1.json().find((d: { kind: string }) => d.kind === 'call_button');
  assert.equal(button.id, w.buttonId);
  assert.equal(button.voltage, 2.9);
  assert.equal(button.online, true);
  assert.equal(button.last_seen_at, ctx.clock.now().toISOString().replace('Z', '000Z'));

  for (const voltage of [2.3, 2.2, 2.5, 2.1]) {
    ctx.clock.advance(1_000);
    await press(ctx.app, w.hubToken, { device_key: w.deviceKey, voltage, button: 0 });
  }
  const low = await ctx.db.query<{ details: { kind: string; id: number; voltage: number } }>(
    "SELECT details FROM events WHERE type = 'device' AND status = 'battery_low' AND organization_id = $1 ORDER BY id",
    [w.organizationId],
  );
  assert.deepEqual(
    low.map((e) => e.details),
    [
      { kind: 'call_button', id: w.buttonId, voltage: 2.3 },
      { kind: 'call_button', id: w.buttonId, voltage: 2.1 },
    ],
    'once until it rises again',
  );
});

test("an unknown device_key, or another organization's button, is 404 call_button_not_found", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  for (const key of ['00:00:00:00:00:00', other.deviceKey]) {
    const res = await press(ctx.app, w.hubToken, { device_key: key });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().code, 'call_button_not_found');
  }
  assert.equal((await ctx.db.query('SELECT 1 FROM cfh_requests WHERE callbutton_id = $1', [other.buttonId])).length, 0);
  const bad = await press(ctx.app, w.hubToken, { device_key: w.deviceKey, voltage: 'high' });
  assert.equal(bad.statusCode, 422);
});

test("B2: completed with a reason, close and customer_canceled act on the button's own open request", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 0 } });
  const update = (messageId: string, body: Record<string, unknown>, deviceKey = w.deviceKey) =>
    ctx.app.inject({
      method: 'PUT',
      url: `/api/callbutton/${messageId}`,
      headers: { authorization: `Hub ${w.hubToken}` },
      payload: { device_key: deviceKey, ...body },
    });

  const a = (await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).body;
  assert.equal(success(await cfhClient(ctx.app, w.token).onTheWay(a, ann)), true);
  assert.equal((await update(a, { update_type: 'completed' })).statusCode, 422, 'completed needs a reason');
  const done = await update(a, { update_type: 'completed', reason: 'helped' });
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json().message, 'Success');
  const data = done.json().data;
  assert.deepEqual(
    [data.status, data.completion_reason, data.is_completed, data.employee_has_arrived, data.employee_arrived_at],
    ['completed', 'helped', 1, true, data.staff_on_the_way_at],
  );
  const again = await update(a, { update_type: 'close' });
  assert.equal(again.statusCode, 404);
  assert.equal(again.json().code, 'cfh_request_not_found');

  const b = (await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).body;
  const closed = (await update(b, { update_type: 'close' })).json().data;
  assert.deepEqual([closed.status, closed.completion_reason], ['completed', 'closed']);

  const c = (await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).body;
  const cancelled = (await update(c, { update_type: 'customer_canceled' })).json().data;
  assert.deepEqual([cancelled.status, cancelled.is_canceled], ['cancelled', true]);
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, c), ['created', 'canceled']);
});

test("B2 on a request that is not the button's is 404 and changes nothing", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const { message_id } = (await cfhClient(ctx.app, w.token).create({ location_id: w.locationId, option_id: w.optionId })).json();
  const res = await ctx.app.inject({
    method: 'PUT',
    url: `/api/callbutton/${message_id}`,
    headers: { authorization: `Hub ${w.hubToken}` },
    payload: { device_key: w.deviceKey, update_type: 'close' },
  });
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().code, 'cfh_request_not_found');
  assert.deepEqual(await eventKinds(ctx.db, w.organizationId, message_id), ['created']);
});

test('a hub that posts a form is understood: numbers as text', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const form = (body: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/callbutton/press',
      headers: { authorization: `Hub ${w.hubToken}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
    });
  const report = await form(`device_key=${encodeURIComponent(w.deviceKey)}&voltage=2.75&button=0`);
  assert.equal(report.statusCode, 200, report.body);
  assert.equal(report.body, 'Voltage updated successfully');
  const [row] = await ctx.db.query<{ voltage: number }>('SELECT voltage FROM call_buttons WHERE id = $1', [w.buttonId]);
  assert.equal(row?.voltage, 2.75);
  const pressed = await form(`device_key=${encodeURIComponent(w.deviceKey)}&button=1`);
  assert.match(pressed.body, /^[A-Za-z0-9_-]{22}$/);
  assert.equal((await form(`device_key=${encodeURIComponent(w.deviceKey)}&voltage=lots`)).statusCode, 422);
});
