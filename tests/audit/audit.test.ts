// The audit log's reads (contract sections 17 and 18): listAuditEntries newest first in pages, its
// filters, who reads what (an organization's admins everything of it, a location's admins that
// location's, staff nothing), and the entry's exact view, also of a change made from a session.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { makePerson, signInHttp, type TestPerson } from '../support/people.ts';
import { enroll } from '../support/store-devices.ts';
import { provisionToken, testApp, type TestContext } from '../support/world.ts';
import { bearer, entry, org } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-04-01T10:00:00.000Z') });
});

type Listed = { entries: { id: number; at: string; action: string; location_id: number | null }[]; next_cursor: string | null };

async function list(headers: Record<string, string>, query = ''): Promise<Listed & { status: number; body: string }> {
  const res = await ctx.app.inject({ method: 'GET', url: `/api/admin/audit${query}`, headers });
  return { ...(res.statusCode === 200 ? res.json<Listed>() : { entries: [], next_cursor: null }), status: res.statusCode, body: res.body };
}

const actions = (l: Listed) => l.entries.map((e) => e.action);

test("the organization's entries newest first, in pages that together are the whole list; each entry exactly the contract's view", async () => {
  const o = await org(ctx);
  await entry(ctx, o, '2026-03-01T09:00:00Z', { action: 'call_button.created', changes: { name: { from: null, to: 'Aisle 4' } } });
  for (let i = 0; i < 5; i++) await entry(ctx, o, '2026-03-02T09:00:00Z', { action: `call_button.updated`, changes: { n: { from: i, to: i + 1 } } });
  await entry(ctx, o, '2026-03-03T09:00:00Z', {
    action: 'token.revoked',
    locationId: null,
    actor: { type: 'person', id: String(o.admin.id), name: 'Sam' },
    target: { type: 'token', id: 12, name: 'Chat' },
    changes: { token: { from: '[secret]', to: null } },
    origin: { ip: '203.0.113.7', userAgent: 'Mozilla/5.0' },
  });
  await entry(ctx, o, '2026-03-04T09:00:00Z', {
    action: 'sign_in.failed',
    locationId: null,
    target: null,
    actor: { type: 'person', id: null, name: 'who@example.com' },
  });

  // Before the time of the test's setup (provisioning's entries, at the clock's now).
  const all = await list(bearer(o.adminToken), '?limit=200&to=2026-03-31');
  assert.equal(all.status, 200, all.body);
  assert.deepEqual(actions(all), ['sign_in.failed', 'token.revoked', ...Array(5).fill('call_button.updated'), 'call_button.created']);
  assert.equal(all.next_cursor, null);
  const ids = all.entries.map((e) => e.id);
  assert.deepEqual(
    ids.slice(2, 7),
    [...ids.slice(2, 7)].sort((a, b) => b - a),
    'the same time: the later written first',
  );

  const res = await ctx.app.inject({ method: 'GET', url: '/api/admin/audit?action=token.revoked', headers: bearer(o.adminToken) });
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.deepEqual(res.json().entries, [
    {
      id: ids[1],
      at: '2026-03-03T09:00:00.000000Z',
      actor: { type: 'person', id: String(o.admin.id), name: 'Sam' },
      action: 'token.revoked',
      target: { type: 'token', id: '12', name: 'Chat' },
      organization_id: o.w.organizationId,
      location_id: null,
      changes: { token: { from: '[secret]', to: null } },
      ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0',
    },
  ]);
  assert.equal(all.entries[0]?.action, 'sign_in.failed');
  const failed = (await list(bearer(o.adminToken), '?action=sign_in.failed')).entries[0] as unknown as { target: unknown };
  assert.equal(failed.target, null, 'an entry of no target');

  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Listed & { status: number } = await list(bearer(o.adminToken), `?to=2026-03-31&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(page.status, 200);
    assert.ok(page.entries.length <= 3);
    seen.push(...page.entries.map((e) => e.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null);
  assert.deepEqual(seen, ids);
  assert.equal(pages, 3);
});

test('filters: location, from and to (dates are whole UTC days, date-times exact), an action or its family; bad ones are 422', async () => {
  const o = await org(ctx);
  await entry(ctx, o, '2026-02-28T23:59:59.999Z', { action: 'person.created' });
  await entry(ctx, o, '2026-03-01T00:00:00Z', { action: 'person.updated' });
  await entry(ctx, o, '2026-03-01T12:00:00Z', { action: 'person', locationId: o.second });
  await entry(ctx, o, '2026-03-01T23:59:59.999Z', { action: 'personal.thing' });
  await entry(ctx, o, '2026-03-02T00:00:00Z', { action: 'membership.granted' });
  const h = bearer(o.adminToken);
  assert.deepEqual(actions(await list(h, '?from=2026-03-01&to=2026-03-01')), ['personal.thing', 'person', 'person.updated']);
  assert.deepEqual(actions(await list(h, '?from=2026-03-01T12:00:00Z&to=2026-03-02T00:00:00Z')), ['membership.granted', 'personal.thing', 'person']);
  assert.deepEqual(actions(await list(h, '?to=2026-03-01T01:00:00%2B01:00')), ['person.updated', 'person.created'], 'a zone other than Z');
  assert.deepEqual(actions(await list(h, '?action=person')), ['person', 'person.updated', 'person.created'], 'the family, not personal.*');
  assert.deepEqual(actions(await list(h, '?action=person.updated')), ['person.updated']);
  assert.deepEqual(actions(await list(h, `?location_id=${o.second}`)), ['person']);
  assert.deepEqual(actions(await list(h, `?location_id=${o.w.locationId}&action=person`)), ['person.updated', 'person.created']);
  for (const query of [
    '?from=2026-03-02&to=2026-03-01',
    '?from=2026-03-01T12:00:00Z&to=2026-03-01T11:00:00Z',
    '?from=2026-02-30',
    '?from=yesterday',
    '?to=2026-03-01T10:00:00',
    '?action=Person',
    '?action=person.',
    '?cursor=bm90LWEtY3Vyc29y',
    '?from=2026-02-30T00:00:00Z',
    '?to=2026-02-31T10:00Z',
    '?from=2026-03-01T24:30:00Z',
    `?cursor=${Buffer.from(JSON.stringify(['2026-13-45T99:99Z', 1])).toString('base64url')}`,
    '?limit=0',
    '?limit=201',
    '?location_id=abc',
  ]) {
    const res = await list(h, query);
    assert.equal(res.status, 422, `${query}: ${res.body}`);
  }
});

test("who reads what: the organization's admins everything of it; a location admin their locations' entries only; staff and other scopes 403; out of reach 404", async () => {
  const o = await org(ctx);
  const other = await org(ctx);
  await entry(ctx, o, '2026-03-01T09:00:00Z', { action: 'here.first' });
  await entry(ctx, o, '2026-03-01T10:00:00Z', { action: 'there.second', locationId: o.second });
  await entry(ctx, o, '2026-03-01T11:00:00Z', { action: 'org.wide', locationId: null });
  await entry(ctx, other, '2026-03-01T12:00:00Z', { action: 'other.org' });
  const person = async (p: TestPerson) => ({ cookie: (await signInHttp(ctx.app, p)).cookie });
  const mine = (l: Listed) => actions(l).filter((a) => ['here.first', 'there.second', 'org.wide', 'other.org'].includes(a));

  const orgAdmin = await person(o.admin);
  assert.deepEqual(mine(await list(orgAdmin)), ['org.wide', 'there.second', 'here.first']);
  assert.deepEqual(mine(await list(bearer(o.adminToken))), ['org.wide', 'there.second', 'here.first']);
  const lou = await person(await makePerson(ctx.db, ctx.clock, o.w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [o.w.locationId] }));
  assert.deepEqual(mine(await list(lou)), ['here.first']);
  assert.deepEqual(mine(await list(lou, `?location_id=${o.w.locationId}`)), ['here.first']);
  const limited = bearer(await provisionToken(ctx.db, ctx.clock, o.w.organizationId, ['admin'], { locationIds: [o.second] }));
  assert.deepEqual(mine(await list(limited)), ['there.second']);
  const max = await person(
    await makePerson(ctx.db, ctx.clock, o.w.organizationId, {
      name: 'Max',
      role: 'location_admin',
      locationIds: [o.w.locationId],
      more: [{ role: 'staff', locationIds: [o.second] }],
    }),
  );
  assert.deepEqual(mine(await list(max)), ['here.first'], 'not the entries of where they are staff');
  const stan = await person(await makePerson(ctx.db, ctx.clock, o.w.organizationId, { name: 'Stan', role: 'staff', locationIds: [o.w.locationId, o.second] }));

  const refusals: [Record<string, string>, string, number, string][] = [
    [stan, '', 403, 'forbidden'],
    [stan, `?location_id=${o.w.locationId}`, 403, 'forbidden'],
    [max, `?location_id=${o.second}`, 403, 'forbidden'],
    [lou, `?location_id=${o.second}`, 404, 'not_found'],
    [lou, `?location_id=${other.w.locationId}`, 404, 'not_found'],
    [limited, `?location_id=${o.w.locationId}`, 404, 'not_found'],
    [bearer(other.adminToken), `?location_id=${o.w.locationId}`, 404, 'not_found'],
    [bearer(o.w.token), '', 403, 'insufficient_scope'],
    [{}, '', 401, 'unauthorized'],
    [{ cookie: 'storeops_session=not-a-session' }, '', 401, 'unauthorized'],
  ];
  for (const [headers, query, status, code] of refusals) {
    for (const url of [`/api/admin/audit${query}`, `/api/admin/audit.csv${query}`]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, status, `${JSON.stringify(headers)} ${url}: ${res.body}`);
      assert.equal(res.json().code, code);
    }
  }
  assert.deepEqual(mine(await list(bearer(other.adminToken))), ['other.org']);
});

test("a change made from a session is an entry the admin then reads, with its request's address and browser", async () => {
  const o = await org(ctx);
  const admin = await signInHttp(ctx.app, o.admin);
  const device = await enroll(ctx.app, admin, o.w.locationId, 'Till 2');
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/audit?location_id=${o.w.locationId}&action=store_device`,
    headers: { cookie: (await signInHttp(ctx.app, o.admin)).cookie },
  });
  const [enrolled] = res.json().entries;
  assert.deepEqual(
    { ...enrolled, id: 0 },
    {
      id: 0,
      at: '2026-04-01T10:00:00.000000Z',
      actor: { type: 'person', id: String(o.admin.id), name: 'Sam' },
      action: 'store_device.enrolled',
      target: { type: 'store_device', id: String(device.device.id), name: 'Till 2' },
      organization_id: o.w.organizationId,
      location_id: o.w.locationId,
      changes: { name: { from: null, to: 'Till 2' }, location_id: { from: null, to: o.w.locationId } },
      ip: '127.0.0.1',
      user_agent: 'lightMyRequest',
    },
  );
});
