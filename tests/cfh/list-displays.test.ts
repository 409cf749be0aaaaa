// C7 (a location's requests, newest first, in pages) and C9 (a request from a display) over HTTP,
// with their refusals; the version 2 operations in the OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { provisionToken, testApp, type TestContext } from '../support/world.ts';
import { addLocation, ann, cfhClient, makeCfhWorld, success } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-09-01T08:00:00.000Z') });
});

const list = (token: string, query: string) => ctx.app.inject({ url: `/api/callforhelp/requests?${query}`, headers: { authorization: `Bearer ${token}` } });

test('C7: open requests of a location newest first by default; closed and all; keyset pages with a Link header', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await client.create({ location_id: w.locationId, option_id: w.optionId })).json().message_id);
    ctx.clock.advance(1_000);
  }
  assert.equal(success(await client.complete(ids[1] as string, 'helped', ann)), true);
  const open = await list(w.token, `location_id=${w.locationId}`);
  assert.equal(open.statusCode, 200, open.body);
  assert.deepEqual(
    open.json().map((r: { message_id: string }) => r.message_id),
    [ids[4], ids[3], ids[2], ids[0]],
  );
  assert.equal(open.json()[0].staff_action, 'claim_and_on_the_way');
  assert.deepEqual(
    (await list(w.token, `location_id=${w.locationId}&state=closed`)).json().map((r: { message_id: string }) => r.message_id),
    [ids[1]],
  );

  const first = await list(w.token, `location_id=${w.locationId}&state=all&limit=2`);
  assert.deepEqual(
    first.json().map((r: { message_id: string }) => r.message_id),
    [ids[4], ids[3]],
  );
  const next = /<([^>]+)>; rel="next"/.exec(first.headers.link as string)?.[1];
  assert.ok(next);
  const second = await ctx.app.inject({ url: next, headers: { authorization: `Bearer ${w.token}` } });
  assert.deepEqual(
    second.json().map((r: { message_id: string }) => r.message_id),
    [ids[2], ids[1]],
  );

  const from = new Date(Date.parse(first.json()[1].created_at)).toISOString();
  const ranged = await list(w.token, `location_id=${w.locationId}&state=all&from=${from}`);
  assert.deepEqual(
    ranged.json().map((r: { message_id: string }) => r.message_id),
    [ids[4], ids[3]],
  );
});

test("C7 refusals: another organization's location and a location outside the token's are 404; bad queries 422", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const other = await makeCfhWorld(ctx.db, ctx.clock);
  assert.equal((await list(other.token, `location_id=${w.locationId}`)).statusCode, 404);
  const limited = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'], { locationIds: [await addLocation(ctx.db, ctx.clock, w)] });
  assert.equal((await list(limited, `location_id=${w.locationId}`)).statusCode, 404);
  for (const q of ['', `location_id=${w.locationId}&state=done`, `location_id=${w.locationId}&limit=0`, `location_id=${w.locationId}&from=yesterday`]) {
    assert.equal((await list(w.token, q)).statusCode, 422, q);
  }
});

test('a token limited to other locations cannot create, claim or read a request of this location', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const limited = cfhClient(
    ctx.app,
    await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh'], { locationIds: [await addLocation(ctx.db, ctx.clock, w)] }),
  );
  const created = await limited.create({ location_id: w.locationId, option_id: w.optionId });
  assert.equal(created.statusCode, 422, created.body);
  const { message_id } = (await cfhClient(ctx.app, w.token).create({ location_id: w.locationId, option_id: w.optionId })).json();
  for (const res of [
    await limited.claim(message_id),
    await limited.onTheWay(message_id),
    await limited.complete(message_id),
    await limited.cancel(message_id),
    await limited.track(message_id),
  ]) {
    assert.equal(res.statusCode, 404, res.body);
  }
  const hub = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['buttons'], { locationIds: [await addLocation(ctx.db, ctx.clock, w)] });
  const pressed = await ctx.app.inject({
    method: 'POST',
    url: '/api/callbutton/press',
    headers: { authorization: `Hub ${hub}` },
    payload: { device_key: w.deviceKey },
  });
  assert.equal(pressed.statusCode, 404);
});

test('C9: a display request with an option, or a free text; refusals create nothing', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { settings: { call_button_cooldown_seconds: 60 } });
  const post = (payload: Record<string, unknown>, key = w.displayKey, ip = '10.0.0.1') =>
    ctx.app.inject({ method: 'POST', url: `/api/callforhelp/displays/${key}/requests`, payload, remoteAddress: ip });
  const res = await post({ option_id: w.secondOptionId });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual([res.json().source, res.json().display_id, res.json().option_id, res.json().status], ['display', w.displayId, w.secondOptionId, 'created']);

  const again = await post({ option_id: w.secondOptionId });
  assert.equal(again.statusCode, 429);
  assert.equal(again.headers['retry-after'], '60');
  assert.equal(again.json().message, 'Please wait 60 seconds before sending another request!');
  assert.equal((await post({ option_id: w.optionId }, w.displayKey, '10.0.0.2')).statusCode, 201, 'another address is not held back');

  const refusals: [Record<string, unknown>, number, string?][] = [
    [{}, 422],
    [{ option_id: 999_999 }, 422, 'option_id'],
    [{ custom_text: 'x'.repeat(201) }, 422, 'custom_text'],
    [{ custom_text: 'putain de merde' }, 422, 'custom_text'],
    [{ custom_text: 'fuck this' }, 422, 'custom_text'],
  ];
  for (const [payload, status, field] of refusals) {
    const r = await post(payload, w.displayKey, '10.0.0.3');
    assert.equal(r.statusCode, status, `${JSON.stringify(payload)}: ${r.body}`);
    if (field !== undefined) assert.ok(field in r.json().errors, r.body);
  }
  const text = await post({ custom_text: 'Where is the paint?' }, w.displayKey, '10.0.0.3');
  assert.equal(text.statusCode, 201, text.body);
  assert.equal(text.json().option_id, w.optionId, "a text alone takes the display's first option");
  const [event] = await ctx.db.query<{ details: Record<string, unknown> }>("SELECT details FROM events WHERE details->>'message_id' = $1", [
    text.json().message_id,
  ]);
  assert.deepEqual([event?.details.type, event?.details.name, event?.details.option_text], ['display', 'Entrance QR', 'Where is the paint?']);

  const unknown = await post({ option_id: w.optionId }, 'nobody-has-this-display-key-0000');
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().code, 'display_not_found');
  const [{ n }] = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE display_id = $1', [w.displayId])) as [{ n: number }];
  assert.equal(n, 3);

  ctx.clock.advance(61_000);
  assert.equal((await post({ option_id: w.optionId }, w.displayKey, '10.0.0.9')).statusCode, 201);
  const clients = await ctx.db.query<{ client: string }>('SELECT client FROM cfh_display_presses WHERE display_id = $1', [w.displayId]);
  assert.deepEqual(
    clients.map((c) => c.client),
    ['10.0.0.9'],
    'addresses past their cooldown are forgotten',
  );
});

test('C9 refuses free text when the display does not allow it', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock, { allowCustomText: false });
  const r = await ctx.app.inject({ method: 'POST', url: `/api/callforhelp/displays/${w.displayKey}/requests`, payload: { custom_text: 'hello' } });
  assert.equal(r.statusCode, 422);
});

test('the version 2 operations are in the OpenAPI document with their operationIds, security and statuses', async () => {
  const doc = (await ctx.app.inject({ url: '/openapi.json' })).json();
  const expected: [string, string, string, string[], string?][] = [
    ['/api/callbutton/press', 'post', 'pressCallButton', ['200', '401', '403', '404', '422', '429'], 'text/plain'],
    ['/api/callbutton/{message_id}', 'put', 'updateCallButtonRequest', ['200', '401', '403', '404', '422']],
    ['/api/callforhelp/v1/tracking/stream', 'get', 'streamCfhRequest', ['200', '401', '403', '404', '422'], 'text/event-stream'],
    ['/api/callforhelp/requests', 'get', 'listCfhRequests', ['200', '401', '403', '404', '422']],
    ['/api/callforhelp/requests/stream', 'get', 'streamCfhRequests', ['200', '401', '403', '404', '422'], 'text/event-stream'],
    ['/api/callforhelp/displays/{display_key}/requests', 'post', 'createDisplayRequest', ['201', '404', '422', '429']],
  ];
  for (const [path, method, operationId, statuses, contentType] of expected) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path}`);
    assert.equal(op.operationId, operationId);
    assert.ok(op.summary, operationId);
    assert.ok(Array.isArray(op.security), operationId);
    for (const status of statuses) assert.ok(op.responses[status], `${operationId} ${status}`);
    if (contentType !== undefined) assert.ok(op.responses['200'].content[contentType], `${operationId} ${contentType}`);
  }
  assert.equal(doc.paths['/help/{display_key}'], undefined, 'the pages are not API operations');
});
