// A person's session and its guards (contract section 17): the cookie's attributes, who may sign
// in, idle and total expiry on the manual clock, signing out, what ends a session, CSRF and Origin
// on every state-changing call, and the person's organization and locations limiting every read and
// action of the console.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { otherInstanceDb, testApp, testConfig, freshId } from '../support/world.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { consoleWorld } from '../console/support.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';

const sessionsOf = (ctx: { db: { query: <R>(text: string, params?: unknown[]) => Promise<R[]> } }, personId: number) =>
  ctx.db.query<{ session_hash: string }>('SELECT session_hash FROM sessions WHERE person_id = $1 ORDER BY id', [personId]);

test('signing in with a password sets an HttpOnly, SameSite=Lax session cookie stored only as its hash', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  assert.match(s.setCookie, /^storeops_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/);
  const value = s.cookie.split('=')[1] as string;
  assert.deepEqual(
    (await sessionsOf(ctx, w.admin.id)).map((r) => r.session_hash),
    [sha256hex(value)],
  );
  const session = await ctx.app.inject({ method: 'GET', url: '/api/session', headers: { cookie: s.cookie } });
  assert.deepEqual(session.json(), {
    signed_in: true,
    person: { id: w.admin.id, name: 'Sam', email: w.admin.email },
    memberships: [{ role: 'org_admin', organization_id: w.organizationId, location_ids: null }],
    csrf_token: s.csrf,
    must_change_password: false,
    store_device: null,
  });
  const state = await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: s.cookie } });
  assert.equal(state.json().person.name, 'Sam');
  assert.deepEqual(state.json().locations, [{ id: w.locationId, name: state.json().locations[0].name, role: 'org_admin' }]);
  const again = await signInHttp(ctx.app, w.admin);
  assert.notEqual(again.cookie, s.cookie, 'a new value at every sign-in');
});

test('a wrong password, an unknown email, a disabled person, a person without a role: 401 in the same words, no session, an audit entry without the password', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const disabled = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Dee' });
  await ctx.db.query("UPDATE people SET status = 'disabled' WHERE id = $1", [disabled.id]);
  const roleless = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Ray' });
  await ctx.db.query('DELETE FROM memberships WHERE person_id = $1', [roleless.id]);
  const cases = [
    { email: w.admin.email, password: 'not-the-password-0' },
    { email: `nobody-${freshId()}@example.com`, password: 'not-the-password-1' },
    { email: disabled.email, password: disabled.password },
    { email: roleless.email, password: roleless.password },
  ];
  for (const payload of cases) {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/session', payload });
    assert.equal(res.statusCode, 401, payload.email);
    assert.deepEqual(res.json(), { message: 'the email or password is not right', code: 'unauthorized' });
    assert.equal(res.headers['set-cookie'], undefined);
  }
  for (const id of [w.admin.id, disabled.id, roleless.id]) assert.deepEqual(await sessionsOf(ctx, id), []);
  const entries = await ctx.db.query<{ action: string; changes: unknown }>(
    "SELECT action, changes FROM audit_entries WHERE action = 'sign_in.failed' AND actor_id = ANY ($1::text[]) ORDER BY id",
    [[w.admin.id, disabled.id, roleless.id].map(String)],
  );
  assert.equal(entries.length, 3);
  const all = JSON.stringify(await ctx.db.query('SELECT * FROM audit_entries WHERE organization_id = $1', [w.organizationId]));
  for (const p of cases) assert.ok(!all.includes(p.password), 'no password in the audit log');
});

test('the cookie is Secure when PUBLIC_BASE_URL is https', async (t) => {
  const ctx = await testApp({ t, config: testConfig({ PUBLIC_BASE_URL: 'https://store.example' }) });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({ method: 'POST', url: '/api/session', payload: { email: w.admin.email, password: w.admin.password } });
  assert.match(String(res.headers['set-cookie']), /; Secure$/);
});

test('a session ends after 12 hours idle, and each request restarts the idle time', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.admin);
  const queue = () => ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  clock.advance(11 * 3600_000);
  assert.equal((await queue()).statusCode, 200);
  clock.advance(11 * 3600_000);
  assert.equal((await queue()).statusCode, 200, 'idle for 11 h only');
  clock.advance(12 * 3600_000 + 1000);
  const res = await queue();
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().code, 'unauthorized');
  const state = await ctx.app.inject({ method: 'GET', url: '/api/session', headers: { cookie: s.cookie } });
  assert.equal(state.json().signed_in, false);
});

test('a session lasts 7 days at most, however busy', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.admin);
  const queue = () => ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  for (let hour = 0; hour + 6 < 7 * 24; hour += 6) {
    clock.advance(6 * 3600_000);
    assert.equal((await queue()).statusCode, 200, `after ${hour + 6} h`);
  }
  clock.advance(7 * 3600_000);
  assert.equal((await queue()).statusCode, 401);
});

test('signing out ends the session: the same cookie is refused afterwards', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const out = await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(s) });
  assert.equal(out.statusCode, 200);
  assert.equal(out.json().signed_in, false);
  assert.match(String(out.headers['set-cookie']), /^storeops_session=; Max-Age=0/);
  const [entry] = await ctx.db.query<{ action: string }>("SELECT action FROM audit_entries WHERE actor_id = $1 AND action = 'sign_out'", [String(w.admin.id)]);
  assert.ok(entry !== undefined, 'signing out is in the audit log');
  const res = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/lockers`, headers: { cookie: s.cookie } });
  assert.equal(res.statusCode, 401);
});

test('a disabled person, or one whose last membership is removed, is signed out at the next request', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const kim = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId] });
  const ann = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Ann', role: 'staff', locationIds: [w.locationId] });
  const [k, a] = [await signInHttp(ctx.app, kim), await signInHttp(ctx.app, ann)];
  const devices = (cookie: string) => ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/devices`, headers: { cookie } });
  assert.equal((await devices(k.cookie)).statusCode, 200);
  await ctx.db.query("UPDATE people SET status = 'disabled' WHERE id = $1", [kim.id]);
  await ctx.db.query('DELETE FROM memberships WHERE person_id = $1', [ann.id]);
  assert.equal((await devices(k.cookie)).statusCode, 401);
  assert.equal((await devices(a.cookie)).statusCode, 401);
});

test('the console scope no longer signs in: the token-and-name sign-in is gone', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({ method: 'POST', url: '/api/session', payload: { token: w.token, name: 'Sam' } });
  assert.equal(res.statusCode, 422);
  assert.equal((await ctx.app.inject({ method: 'POST', url: '/console/api/session', payload: { token: w.token, name: 'Sam' } })).statusCode, 404);
});

test('a state-changing call without the CSRF token, with a forged one, or from another origin is refused and changes nothing', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const cabinet = w.cabinetIds[0] as number;
  const attempts: Record<string, string>[] = [
    { cookie: s.cookie },
    { cookie: s.cookie, 'x-csrf-token': 'forged-0123456789abcdefghijklmnopqrstuvwxyzABCD' },
    { cookie: s.cookie, 'x-csrf-token': (await signInHttp(ctx.app, w.admin)).csrf },
    { ...fromPage(s), origin: 'https://evil.example' },
    { ...fromPage(s), 'sec-fetch-site': 'cross-site' },
  ];
  for (const headers of attempts) {
    const res = await ctx.app.inject({ method: 'POST', url: `/console/api/cabinets/${cabinet}/open`, headers, payload: {} });
    assert.equal(res.statusCode, 403, JSON.stringify(headers));
    assert.equal(res.json().code, 'csrf_failed');
  }
  const [row] = await ctx.db.query<{ state: string }>('SELECT state FROM cabinets WHERE id = $1', [cabinet]);
  assert.equal(row?.state, 'closed');
  const [commands] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cabinet_commands WHERE cabinet_id = $1', [cabinet]);
  assert.equal(commands?.n, 0);
  const ok = await ctx.app.inject({ method: 'POST', url: `/console/api/cabinets/${cabinet}/open`, headers: fromPage(s), payload: {} });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().state, 'open');
});

test('sign-in from another origin is refused (no login CSRF)', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/session',
    headers: { origin: 'https://evil.example' },
    payload: { email: w.admin.email, password: w.admin.password },
  });
  assert.equal(res.statusCode, 403);
  assert.equal(res.headers['set-cookie'], undefined);
});

test("another organization's or another location's objects are not found, and nothing changes", async (t) => {
  const ctx = await testApp({ t });
  const mine = await consoleWorld(ctx.db, ctx.clock);
  const other = await consoleWorld(ctx.db, ctx.clock);
  // A second location of my organization, outside a token limited to the first.
  const secondLocation = freshId();
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id: secondLocation, organization_id: mine.organizationId, name: 'Second store' }] });
  const limited = await makePerson(ctx.db, ctx.clock, mine.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [mine.locationId] });
  const s = await signInHttp(ctx.app, limited);
  const state = await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: s.cookie } });
  assert.deepEqual(
    state.json().locations.map((l: { id: number }) => l.id),
    [mine.locationId],
  );

  for (const loc of [other.locationId, secondLocation, 999_999_999]) {
    for (const page of [
      'queue',
      'lockers',
      'devices',
      'radio',
      'webhooks',
      'stream',
      'reports?from=2026-01-01&to=2026-01-02',
      'requests.csv?from=2026-01-01&to=2026-01-02',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${loc}/${page}`, headers: { cookie: s.cookie } });
      assert.equal(res.statusCode, 404, `${loc} ${page}`);
      assert.equal(res.json().code, 'not_found');
    }
  }
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${other.token}` },
    payload: { location_id: other.locationId, option_id: other.optionId },
  });
  assert.equal(created.statusCode, 201, created.body);
  const messageId = created.json().message_id as string;
  const refused = [
    `/console/api/cabinets/${other.cabinetIds[0]}/open`,
    `/console/api/cfh/${messageId}/claim`,
    `/console/api/radio/${encodeURIComponent(other.edgeId)}/announce`,
  ];
  for (const url of refused) {
    const res = await ctx.app.inject({ method: 'POST', url, headers: fromPage(s), payload: { text: 'hello' } });
    assert.equal(res.statusCode, 404, url);
  }
  const [req] = await ctx.db.query<{ is_claimed: boolean }>('SELECT is_claimed FROM cfh_requests WHERE message_id = $1', [messageId]);
  assert.equal(req?.is_claimed, false);
  const [cab] = await ctx.db.query<{ state: string }>('SELECT state FROM cabinets WHERE id = $1', [other.cabinetIds[0]]);
  assert.equal(cab?.state, 'closed');
});

test("claim, on the way and complete from the console are the signed-in person's: their name, person:<id>, web_interface", async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const alex = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Alex <b>', role: 'staff', locationIds: [w.locationId] });
  const s = await signInHttp(ctx.app, alex);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  const messageId = created.json().message_id as string;
  const queue = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  assert.deepEqual(
    queue.json().requests.map((r: { message_id: string; status: string }) => [r.message_id, r.status]),
    [[messageId, 'created']],
  );
  for (const step of ['claim', 'on_the_way']) {
    const res = await ctx.app.inject({ method: 'POST', url: `/console/api/cfh/${messageId}/${step}`, headers: fromPage(s), payload: {} });
    assert.deepEqual(res.json(), { success: true });
  }
  const noOutcome = await ctx.app.inject({ method: 'POST', url: `/console/api/cfh/${messageId}/complete`, headers: fromPage(s), payload: {} });
  assert.equal(noOutcome.statusCode, 422);
  const done = await ctx.app.inject({ method: 'POST', url: `/console/api/cfh/${messageId}/complete`, headers: fromPage(s), payload: { outcome: 'helped' } });
  assert.deepEqual(done.json(), { success: true });
  const [row] = await ctx.db.query<{ claimed_by: string; claimed_by_user_id: string; claimed_from: string; is_completed: boolean; completion_reason: string }>(
    'SELECT claimed_by, claimed_by_user_id, claimed_from, is_completed, completion_reason FROM cfh_requests WHERE message_id = $1',
    [messageId],
  );
  assert.deepEqual(row, {
    claimed_by: 'Alex <b>',
    claimed_by_user_id: `person:${alex.id}`,
    claimed_from: 'web_interface',
    is_completed: true,
    completion_reason: 'helped',
  });
});

test('ended and idle sessions are forgotten by later sign-ins', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const ended = await signInHttp(ctx.app, w.admin);
  await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(ended) });
  await signInHttp(ctx.app, w.admin); // left idle
  clock.advance(12 * 3600_000 + 1000);
  const live = await signInHttp(ctx.app, w.admin);
  assert.deepEqual(
    (await sessionsOf(ctx, w.admin.id)).map((r) => r.session_hash),
    [sha256hex(live.cookie.split('=')[1] as string)],
  );
});

test('a person disabled on one instance is refused at their next request on another, which holds nothing of the session', async (t) => {
  const a = await testApp({ t });
  const b = await testApp({ t, db: await otherInstanceDb() });
  const w = await consoleWorld(a.db, a.clock);
  const kim = await makePerson(a.db, a.clock, w.organizationId, { name: 'Kim', role: 'staff', locationIds: [w.locationId] });
  const s = await signInHttp(a.app, kim);
  const queue = (app: typeof a.app) => app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  assert.equal((await queue(b.app)).statusCode, 200, 'the session works on the other instance');
  await b.db.query("UPDATE people SET status = 'disabled' WHERE id = $1", [kim.id]);
  assert.equal((await queue(a.app)).statusCode, 401);
  assert.equal((await queue(b.app)).statusCode, 401);
});

test("a body of one way of signing in carrying another way's fields is that way, never a 500", async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const bodies = [
    { password: '', badge_code: '\u0000' },
    { email: w.admin.email, password: 5, badge_code: 'B-1' },
    { email: w.admin.email, pin: '123456', password: null },
  ];
  for (const payload of bodies) {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/session', payload });
    assert.ok([400, 401, 403, 422].includes(res.statusCode), `${JSON.stringify(payload)}: ${res.statusCode} ${res.body}`);
    assert.equal(res.headers['set-cookie'], undefined);
  }
});
