// P1 and P2 (contract section 16) over a history made through the API with known answers: day
// boundaries in the store's time zone, medians and 90th percentiles, every CSV row, and the errors.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { exportPage, rangeBounds } from '../../src/reports/store.ts';
import { ann, bob, cfhClient, createRequest, makeCfhWorld, press, success } from '../cfh/support.ts';
import { makeWorld, provisionToken, testApp, type TestContext } from '../support/world.ts';
import { parseCsv, report, reportWorld } from './support.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-01-10T04:30:00.000Z') });
});

/** Four requests: A on Jan 9 in Toronto (Jan 10 in UTC), B and C (a timeout) on Jan 10, D canceled on Jan 12. */
async function history() {
  const w = await reportWorld(ctx, { timeZone: 'America/Toronto' });
  const client = cfhClient(ctx.app, w.token);
  const at = (iso: string) => ctx.clock.set(iso);
  const create = () => createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  at('2026-01-10T04:30:00.000Z');
  const a = await create();
  at('2026-01-10T04:31:00.000Z');
  success(await client.claim(a.message_id, ann));
  at('2026-01-10T04:32:00.000Z');
  success(await client.onTheWay(a.message_id, ann));
  at('2026-01-10T04:35:00.000Z');
  success(await client.complete(a.message_id, 'sale', ann));
  at('2026-01-10T15:00:00.000Z');
  const b = await create();
  at('2026-01-10T15:00:30.000Z');
  success(await client.claim(b.message_id, bob));
  at('2026-01-10T15:01:30.000Z');
  success(await client.onTheWay(b.message_id, bob));
  at('2026-01-10T15:10:00.000Z');
  success(await client.complete(b.message_id, '=HYPERLINK("http://evil")', bob));
  at('2026-01-10T16:00:00.000Z');
  const c = await create();
  at('2026-01-10T16:05:01.000Z');
  await ctx.scheduler.runDue();
  at('2026-01-12T10:00:00.000Z');
  const d = await create();
  assert.equal((await client.cancel(d.message_id)).statusCode, 200);
  return { w, a, b, c, d };
}

test("P1 counts each request on its day in the store's time zone, with medians, 90th percentiles and every group", async () => {
  const { w } = await history();
  const res = await report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: '2026-01-09', to: '2026-01-12' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), {
    location_id: w.locationId,
    from: '2026-01-09',
    to: '2026-01-12',
    total: 4,
    per_day: [
      { day: '2026-01-09', requests: 1, escalations: 0, timeouts: 0 },
      { day: '2026-01-10', requests: 2, escalations: 1, timeouts: 1 },
      { day: '2026-01-11', requests: 0, escalations: 0, timeouts: 0 },
      { day: '2026-01-12', requests: 1, escalations: 0, timeouts: 0 },
    ],
    by_source: [{ key: 'api', name: 'API', requests: 4 }],
    by_option: [{ key: String(w.optionId), name: 'Help', requests: 4 }],
    by_device: [{ key: 'none', name: null, requests: 4 }],
    time_to_claim: { median_s: 45, p90_s: 57 },
    time_to_on_the_way: { median_s: 105, p90_s: 117 },
    time_to_complete: { median_s: 450, p90_s: 570 },
    outcomes: [
      { key: '=HYPERLINK("http://evil")', count: 1 },
      { key: 'sale', count: 1 },
    ],
    by_employee: [
      { claimed_by: 'Ann', claimed: 1, completed: 1 },
      { claimed_by: 'Bob', claimed: 1, completed: 1 },
    ],
  });

  const one = (await report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: '2026-01-11', to: '2026-01-11' })).json();
  assert.equal(one.total, 0);
  assert.deepEqual(one.time_to_claim, { median_s: null, p90_s: null });
  assert.deepEqual([one.by_source, one.outcomes, one.by_employee], [[], [], []]);
});

test('P1 in UTC for a store without a time zone', async () => {
  const w = await reportWorld(ctx);
  const client = cfhClient(ctx.app, w.token);
  ctx.clock.set('2026-01-10T04:30:00.000Z');
  await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  const day = (d: string) => report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: d, to: d });
  assert.equal((await day('2026-01-09')).json().total, 0);
  assert.equal((await day('2026-01-10')).json().total, 1);
});

test('P2 writes every request of the range as a CSV row after a header, quoting text and neutralizing formulas', async () => {
  const { w, a, b, c, d } = await history();
  const res = await report(ctx.app, w.reports, 'cfh/requests.csv', { location_id: w.locationId, from: '2026-01-10', to: '2026-01-12' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/csv/);
  const [header, ...rows] = parseCsv(res.body);
  assert.ok(header);
  assert.equal(header[0], 'id');
  assert.ok(header.includes('seconds_to_complete'));
  // A message_id is random base64url: one that starts with '-' is a text cell a spreadsheet would
  // read as a formula, so the export prefixes it like any other.
  const asExported = (id: string) => (id.startsWith('-') ? `'${id}` : id);
  assert.deepEqual(
    rows.map((r) => r[1]),
    [b.message_id, c.message_id, d.message_id].map(asExported),
    'A was on Jan 9 in Toronto',
  );
  const col = (row: string[] | undefined, name: string) => row?.[header.indexOf(name)];
  const [rb, rc, rd] = rows;
  assert.equal(col(rb, 'completion_reason'), `'=HYPERLINK("http://evil")`);
  assert.equal(col(rb, 'claimed_by'), 'Bob');
  assert.equal(col(rb, 'is_completed'), '1');
  assert.equal(col(rb, 'seconds_to_claim'), '30');
  assert.equal(col(rb, 'seconds_to_on_the_way'), '90');
  assert.equal(col(rb, 'seconds_to_complete'), '600');
  assert.equal(col(rb, 'created_at'), '2026-01-10T15:00:00.000000Z');
  assert.equal(col(rb, 'closed_at'), '2026-01-10 15:10:00');
  assert.equal(col(rc, 'is_timeout'), 'true');
  assert.equal(col(rc, 'seconds_to_claim'), '');
  assert.equal(col(rd, 'is_canceled'), 'true');
  assert.equal(col(rd, 'source'), 'api');
  assert.ok(res.body.includes(`"'=HYPERLINK(""http://evil"")"`), 'quotes doubled inside a quoted cell');
  assert.ok(res.body.endsWith('\r\n'));
  for (const row of rows) assert.equal(row.length, header.length);
  assert.ok(!res.body.includes(a.message_id));

  // Pages follow each other on (created_at, id) without a gap or a repeat.
  const bounds = await rangeBounds(ctx.db, w.organizationId, w.locationId, '2026-01-09', '2026-01-12');
  assert.ok(bounds);
  const seen: string[] = [];
  let after: { createdAt: string; id: number } | null = null;
  for (;;) {
    const page = await exportPage(ctx.db, w.locationId, bounds, after, 1);
    if (page.length === 0) break;
    const last = page[0] as (typeof page)[number];
    seen.push(last.message_id);
    after = { createdAt: last.created_at, id: last.id };
  }
  assert.deepEqual(seen, [a.message_id, b.message_id, c.message_id, d.message_id]);
});

test("P1-P3 refuse bad ranges (422), other organizations' locations (404), tokens without the reports scope (403) and none (401)", async () => {
  const w = await reportWorld(ctx);
  const other = await makeWorld(ctx.db, ctx.clock);
  const cfhOnly = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['cfh']);
  for (const path of ['cfh', 'lockers', 'cfh/requests.csv'] as const) {
    const q = (from: string, to: string, location = w.locationId) => report(ctx.app, w.reports, path, { location_id: location, from, to });
    for (const [from, to] of [
      ['2026-01-12', '2026-01-11'],
      ['2026-02-30', '2026-03-01'],
      ['yesterday', '2026-01-01'],
      ['2026-01-01', '2026-13-01'],
      ['2000-01-01', '2026-01-01'],
    ]) {
      const res = await q(from as string, to as string);
      assert.equal(res.statusCode, 422, `${path} ${from} ${to}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
    }
    assert.equal((await report(ctx.app, w.reports, path, { location_id: w.locationId, from: '2026-01-01' })).statusCode, 422);
    const foreign = await q('2026-01-01', '2026-01-02', other.locationId);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal((await q('2026-01-01', '2026-01-02', 2_000_000_000)).statusCode, 404);
    assert.equal((await report(ctx.app, cfhOnly, path, { location_id: w.locationId, from: '2026-01-01', to: '2026-01-02' })).json().code, 'insufficient_scope');
    assert.equal((await report(ctx.app, null, path, { location_id: w.locationId, from: '2026-01-01', to: '2026-01-02' })).statusCode, 401);
  }
});

test("a location's time_zone must be an IANA name", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  for (const bad of ['Mars/Olympus', '+05:00', 'EST']) {
    await assert.rejects(
      applyProvisioning(ctx.db, ctx.clock, {
        locations: [{ id: w.locationId, organization_id: w.organizationId, name: 'Store', time_zone: bad }],
      }),
      /time_zone/,
    );
  }
});

test('P1 counts requests by their source and names the busiest buttons and displays', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const reports = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['reports']);
  ctx.clock.set('2026-02-03T12:00:00.000Z');
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200);
  ctx.clock.set('2026-02-03T12:10:00.000Z');
  assert.equal((await press(ctx.app, w.hubToken, { device_key: w.deviceKey })).statusCode, 200);
  const shown = await ctx.app.inject({ method: 'POST', url: `/api/callforhelp/displays/${w.displayKey}/requests`, payload: { option_id: w.optionId } });
  assert.equal(shown.statusCode, 201, shown.body);
  await createRequest(cfhClient(ctx.app, w.token), { location_id: w.locationId, option_id: w.optionId });
  const res = await report(ctx.app, reports, 'cfh', { location_id: w.locationId, from: '2026-02-03', to: '2026-02-03' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<{ by_source: unknown[]; by_device: unknown[] }>();
  assert.deepEqual(body.by_source, [
    { key: 'call_button', name: 'Call button', requests: 2 },
    { key: 'api', name: 'API', requests: 1 },
    { key: 'display', name: 'Display', requests: 1 },
  ]);
  assert.deepEqual(body.by_device, [
    { key: `call_button:${w.buttonId}`, name: 'Paint counter', requests: 2 },
    { key: `display:${w.displayId}`, name: 'Entrance QR', requests: 1 },
    { key: 'none', name: null, requests: 1 },
  ]);
});

test('by_employee counts a person once under their current name, whatever name they had when they claimed', async () => {
  const w = await reportWorld(ctx);
  const client = cfhClient(ctx.app, w.token);
  const kim = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId] });
  const claimInConsole = async () => {
    const s = await signInHttp(ctx.app, kim);
    const { message_id: id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
    const res = await ctx.app.inject({ method: 'POST', url: `/console/api/cfh/${id}/claim`, headers: fromPage(s), payload: {} });
    assert.deepEqual(res.json(), { success: true });
  };
  await claimInConsole();
  await ctx.db.query("UPDATE people SET name = 'Kim Lee' WHERE id = $1", [kim.id]);
  await claimInConsole();
  // A chat integration's claimer who happens to be called Kim too is someone else.
  const other = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  success(await client.claim(other.message_id, { ...ann, claimed_by: 'Kim' }));
  const day = ctx.clock.now().toISOString().slice(0, 10);
  const res = await report(ctx.app, w.reports, 'cfh', { location_id: w.locationId, from: day, to: day });
  assert.deepEqual(res.json().by_employee, [
    { claimed_by: 'Kim Lee', person_id: kim.id, claimed: 2, completed: 0 },
    { claimed_by: 'Kim', claimed: 1, completed: 0 },
  ]);
});
