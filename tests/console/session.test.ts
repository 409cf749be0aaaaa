// Console sessions and their guards (contract section 15): the cookie's attributes, who may sign
// in, idle expiry on the manual clock, signing out, CSRF and Origin on every state-changing call,
// and a token's organization and locations limiting every read and action.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { provisionToken, testApp, testConfig, freshId } from '../support/world.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { consoleWorld, fromPage, signInHttp } from './support.ts';

test('signing in with a console token sets an HttpOnly, SameSite=Strict session cookie stored only as its hash', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.consoleToken);
  assert.match(s.setCookie, /^storeops_console=[A-Za-z0-9_-]{40,}; Max-Age=43200; Path=\/console; HttpOnly; SameSite=Strict$/);
  const value = s.cookie.split('=')[1] as string;
  const rows = await ctx.db.query<{ session_hash: string }>('SELECT session_hash FROM console_sessions WHERE organization_id = $1', [w.organizationId]);
  assert.deepEqual(
    rows.map((r) => r.session_hash),
    [sha256hex(value)],
  );
  const state = await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: s.cookie } });
  assert.equal(state.json().signed_in, true);
  assert.equal(state.json().staff_name, 'Sam');
  assert.deepEqual(
    state.json().locations.map((l: { id: number }) => l.id),
    [w.locationId],
  );
});

test('the cookie is Secure when PUBLIC_BASE_URL is https', async (t) => {
  const ctx = await testApp({ t, config: testConfig({ PUBLIC_BASE_URL: 'https://store.example' }) });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({ method: 'POST', url: '/console/api/session', payload: { token: w.consoleToken, name: 'Sam' } });
  assert.match(String(res.headers['set-cookie']), /; Secure$/);
});

test('a wrong token, a token without the console scope, a revoked one: refused, no session', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const revoked = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['console'], { revoked: true });
  const cases: [string, number, string][] = [
    ['not-a-token-0123456789', 401, 'unauthorized'],
    [w.token, 403, 'insufficient_scope'],
    [revoked, 401, 'unauthorized'],
  ];
  for (const [token, status, code] of cases) {
    const res = await ctx.app.inject({ method: 'POST', url: '/console/api/session', payload: { token, name: 'Sam' } });
    assert.equal(res.statusCode, status);
    assert.equal(res.json().code, code);
    assert.equal(res.headers['set-cookie'], undefined);
  }
  const [sessions] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM console_sessions WHERE organization_id = $1', [w.organizationId]);
  assert.equal(sessions?.n, 0);
});

test('a session ends after 12 hours idle, and each request restarts the idle time', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.consoleToken);
  const queue = () => ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  clock.advance(11 * 3600_000);
  assert.equal((await queue()).statusCode, 200);
  clock.advance(11 * 3600_000);
  assert.equal((await queue()).statusCode, 200, 'idle for 11 h only');
  clock.advance(12 * 3600_000 + 1000);
  const res = await queue();
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().code, 'unauthorized');
  const state = await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: s.cookie } });
  assert.deepEqual(state.json(), { signed_in: false });
});

test('signing out ends the session: the same cookie is refused afterwards', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.consoleToken);
  const out = await ctx.app.inject({ method: 'POST', url: '/console/api/session/end', headers: fromPage(s) });
  assert.equal(out.statusCode, 200);
  assert.match(String(out.headers['set-cookie']), /^storeops_console=; Max-Age=0/);
  const res = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/lockers`, headers: { cookie: s.cookie } });
  assert.equal(res.statusCode, 401);
});

test('revoking the token ends its console sessions', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.consoleToken);
  await ctx.db.query('UPDATE api_tokens SET revoked_at = now() WHERE token_hash = $1', [sha256hex(w.consoleToken)]);
  const res = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/devices`, headers: { cookie: s.cookie } });
  assert.equal(res.statusCode, 401);
});

test('a state-changing call without the CSRF token, with a forged one, or from another origin is refused and changes nothing', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.consoleToken);
  const cabinet = w.cabinetIds[0] as number;
  const attempts: Record<string, string>[] = [
    { cookie: s.cookie },
    { cookie: s.cookie, 'x-csrf-token': 'forged-0123456789abcdefghijklmnopqrstuvwxyzABCD' },
    { cookie: s.cookie, 'x-csrf-token': (await signInHttp(ctx.app, w.consoleToken)).csrf },
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
    url: '/console/api/session',
    headers: { origin: 'https://evil.example' },
    payload: { token: w.consoleToken, name: 'x' },
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
  const limited = await provisionToken(ctx.db, ctx.clock, mine.organizationId, ['console'], { locationIds: [mine.locationId] });
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

test('claim, on the way and complete from the console act as web_interface with the signed-in name', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.consoleToken, 'Alex <b>');
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
  const [row] = await ctx.db.query<{ claimed_by: string; claimed_from: string; is_completed: boolean; completion_reason: string }>(
    'SELECT claimed_by, claimed_from, is_completed, completion_reason FROM cfh_requests WHERE message_id = $1',
    [messageId],
  );
  assert.deepEqual(row, { claimed_by: 'Alex <b>', claimed_from: 'web_interface', is_completed: true, completion_reason: 'helped' });
});

test('ended and idle sessions are forgotten by later sign-ins', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const ended = await signInHttp(ctx.app, w.consoleToken);
  await ctx.app.inject({ method: 'POST', url: '/console/api/session/end', headers: fromPage(ended) });
  await signInHttp(ctx.app, w.consoleToken); // left idle
  clock.advance(12 * 3600_000 + 1000);
  const live = await signInHttp(ctx.app, w.consoleToken);
  const rows = await ctx.db.query<{ session_hash: string }>('SELECT session_hash FROM console_sessions WHERE organization_id = $1', [w.organizationId]);
  assert.deepEqual(
    rows.map((r) => r.session_hash),
    [sha256hex(live.cookie.split('=')[1] as string)],
  );
});
