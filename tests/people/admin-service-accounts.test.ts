// Section 18's service accounts and tokens through HTTP: a token shown once and stored as a hash, its
// audit entries without it, revocation refused within a second on this instance and at once on
// another, what a location admin and a limited admin token may make and see, the file's tokens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256hex } from '../../src/http/secrets.ts';
import { signInHttp } from '../support/people.ts';
import { otherInstanceDb, testApp } from '../support/world.ts';
import { adminWorld, auditOf, auditText, bearer, call, refusedToOutsiders, sessionOf, type Caller } from './admin-support.ts';

test('an org admin makes a service account and a token: the value once, a hash stored, and a token that works until revoked', async (t) => {
  const ctx = await testApp({ t });
  const other = await testApp({ t, clock: ctx.clock, db: await otherInstanceDb() });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const account = await call(ctx.app, admin, 'POST', '/api/admin/service_accounts', { name: 'chat-bot' });
  assert.equal(account.statusCode, 201, account.body);
  const { id, created_at, updated_at, ...rest } = account.json();
  assert.ok(created_at && updated_at);
  assert.deepEqual(rest, { organization_id: w.organizationId, name: 'chat-bot', version: 1, managed_by: 'admin', tokens: [] });
  const again = await call(ctx.app, admin, 'POST', '/api/admin/service_accounts', { name: 'chat-bot' });
  assert.equal(again.statusCode, 409);
  assert.equal(again.json().code, 'name_taken');

  const made = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${id}/tokens`, {
    name: 'devices',
    scopes: ['devices', 'admin'],
    location_ids: [w.locationId],
  });
  assert.equal(made.statusCode, 201, made.body);
  const token = made.json();
  assert.match(token.token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(token.name, 'devices');
  assert.equal(token.service_account_id, id);
  assert.deepEqual(
    [token.scopes, token.location_ids, token.expires_at, token.revoked_at, token.managed_by],
    [['devices', 'admin'], [w.locationId], null, null, 'admin'],
  );
  const [stored] = await ctx.db.query<{ token_hash: string }>('SELECT token_hash FROM api_tokens WHERE id = $1', [token.id]);
  assert.equal(stored?.token_hash, sha256hex(token.token), 'stored as its hash only');

  const devices = await call(ctx.app, bearer(token.token), 'GET', `/api/devices?location_id=${w.locationId}`);
  assert.equal(devices.statusCode, 200, 'the new token works at once');
  assert.equal((await call(other.app, bearer(token.token), 'GET', `/api/devices?location_id=${w.locationId}`)).statusCode, 200, 'on both instances');
  const listed = (await call(ctx.app, admin, 'GET', '/api/admin/service_accounts')).json() as { id: number; tokens: Record<string, unknown>[] }[];
  const mine = listed.find((a) => a.id === id);
  assert.equal(mine?.tokens.length, 1);
  assert.equal(mine?.tokens[0]?.token, undefined, 'never the value again');
  assert.equal(typeof mine?.tokens[0]?.last_used_at, 'string', 'its last use');

  const revoked = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${id}/tokens/${token.id}/revoke`);
  assert.equal(revoked.statusCode, 200, revoked.body);
  assert.equal(typeof revoked.json().revoked_at, 'string');
  const twice = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${id}/tokens/${token.id}/revoke`);
  assert.deepEqual(twice.json(), revoked.json(), 'revoking again answers it unchanged');
  // The test's clock stands still: only the revocation's commit can make the instances forget the token.
  const refused = await call(ctx.app, bearer(token.token), 'GET', `/api/devices?location_id=${w.locationId}`);
  assert.equal(refused.statusCode, 401, 'refused at its next request');
  let elsewhere = 0;
  for (let i = 0; i < 50 && elsewhere !== 401; i++) {
    elsewhere = (await call(other.app, bearer(token.token), 'GET', `/api/devices?location_id=${w.locationId}`)).statusCode;
    if (elsewhere !== 401) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(elsewhere, 401, 'and on another instance, which remembered it');

  const entries = await auditOf(ctx.db, w.organizationId, ['service_account.created', 'token.created', 'token.revoked']);
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor_id, e.target_type, e.location_id]),
    [
      ['service_account.created', String(w.admin.id), 'service_account', null],
      ['token.created', String(w.admin.id), 'token', w.locationId],
      ['token.revoked', String(w.admin.id), 'token', w.locationId],
    ],
  );
  assert.deepEqual(entries[1]?.changes.token, { from: null, to: '[secret]' });
  assert.ok(!(await auditText(ctx.db, w.organizationId)).includes(token.token), 'no token in the audit log');
});

test('a location admin and a limited admin token make tokens of their locations only, and see only those', async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const shared = (await call(ctx.app, admin, 'POST', '/api/admin/service_accounts', { name: 'shared' })).json();
  const wide = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${shared.id}/tokens`, { name: 'everywhere', scopes: ['cfh'] });
  assert.equal(wide.statusCode, 201);
  const atB = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${shared.id}/tokens`, {
    name: 'b',
    scopes: ['cfh'],
    location_ids: [w.locationB],
  });
  assert.equal(atB.statusCode, 201);

  for (const caller of [await sessionOf(ctx.app, w.locationAdmin), bearer(w.limitedToken)] as Caller[]) {
    const own = await call(ctx.app, caller, 'POST', '/api/admin/service_accounts', {
      name: `own-${caller !== 'nobody' && 'token' in caller ? 'token' : 'session'}`,
    });
    assert.equal(own.statusCode, 201, own.body);
    const tokens = `/api/admin/service_accounts/${own.json().id}/tokens`;
    for (const body of [
      { name: 'x', scopes: ['cfh'] },
      { name: 'x', scopes: ['cfh'], location_ids: [w.locationB] },
      { name: 'x', scopes: ['cfh'], location_ids: [w.locationId, w.locationB] },
    ]) {
      const res = await call(ctx.app, caller, 'POST', tokens, body);
      assert.equal(res.statusCode, 403, JSON.stringify(body));
      assert.equal(res.json().code, 'forbidden');
    }
    const ok = await call(ctx.app, caller, 'POST', tokens, { name: 'a', scopes: ['cfh', 'admin'], location_ids: [w.locationId] });
    assert.equal(ok.statusCode, 201, ok.body);
    // The shared account holds no token of theirs: not found, nor its tokens.
    assert.equal(
      (await call(ctx.app, caller, 'POST', `/api/admin/service_accounts/${shared.id}/tokens`, { name: 'a', scopes: ['cfh'], location_ids: [w.locationId] }))
        .statusCode,
      404,
    );
    assert.equal((await call(ctx.app, caller, 'POST', `/api/admin/service_accounts/${shared.id}/tokens/${wide.json().id}/revoke`)).statusCode, 404);
    const seen = (await call(ctx.app, caller, 'GET', '/api/admin/service_accounts')).json() as { id: number; tokens: { location_ids: number[] | null }[] }[];
    assert.ok(!seen.some((a) => a.id === shared.id), 'not the shared account');
    for (const a of seen) for (const tk of a.tokens) assert.deepEqual(tk.location_ids, [w.locationId]);
  }
  // An unlimited admin token makes an organization-wide admin token; a limited one may not.
  const org = (await call(ctx.app, bearer(w.adminToken), 'POST', '/api/admin/service_accounts', { name: 'ops' })).json();
  const full = await call(ctx.app, bearer(w.adminToken), 'POST', `/api/admin/service_accounts/${org.id}/tokens`, { name: 'root', scopes: ['admin'] });
  assert.equal(full.statusCode, 201);
  const [entry] = await auditOf(ctx.db, w.organizationId, ['service_account.created']);
  assert.equal(entry?.actor_type, 'person');
  assert.equal((await auditOf(ctx.db, w.organizationId, ['service_account.created'])).at(-1)?.actor_type, 'service_account');
});

test("staff, a token without the admin scope, signed out, another organization's accounts, CSRF", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const signed = await signInHttp(ctx.app, w.admin);
  const admin: Caller = { session: signed };
  const account = (await call(ctx.app, admin, 'POST', '/api/admin/service_accounts', { name: 'mine' })).json();
  const token = (await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${account.id}/tokens`, { name: 't', scopes: ['cfh'] })).json();
  const ops = (caller: Caller) => [
    call(ctx.app, caller, 'GET', '/api/admin/service_accounts'),
    call(ctx.app, caller, 'POST', '/api/admin/service_accounts', { name: 'x' }),
    call(ctx.app, caller, 'POST', `/api/admin/service_accounts/${account.id}/tokens`, { name: 'x', scopes: ['cfh'] }),
    call(ctx.app, caller, 'POST', `/api/admin/service_accounts/${account.id}/tokens/${token.id}/revoke`),
  ];
  await refusedToOutsiders(ctx.app, w, ops);

  const stranger = await sessionOf(ctx.app, w.other.admin);
  assert.equal((await call(ctx.app, stranger, 'POST', `/api/admin/service_accounts/${account.id}/tokens`, { name: 'x', scopes: ['cfh'] })).statusCode, 404);
  assert.equal((await call(ctx.app, stranger, 'POST', `/api/admin/service_accounts/${account.id}/tokens/${token.id}/revoke`)).statusCode, 404);
  assert.ok(!((await call(ctx.app, stranger, 'GET', '/api/admin/service_accounts')).json() as { id: number }[]).some((a) => a.id === account.id));

  const forged = await ctx.app.inject({
    method: 'POST',
    url: `/api/admin/service_accounts/${account.id}/tokens/${token.id}/revoke`,
    headers: { cookie: signed.cookie },
  });
  assert.equal(forged.statusCode, 403);
  assert.equal(forged.json().code, 'csrf_failed');
  const [row] = await ctx.db.query<{ revoked_at: string | null }>('SELECT revoked_at FROM api_tokens WHERE id = $1', [token.id]);
  assert.equal(row?.revoked_at, null, 'nothing changed');
  assert.equal((await auditOf(ctx.db, w.organizationId, ['token.revoked'])).length, 0);
});

test("the file's service accounts and tokens are 409 managed_by_file; bad tokens are 422 by field", async (t) => {
  const ctx = await testApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const accounts = (await call(ctx.app, admin, 'GET', '/api/admin/service_accounts')).json() as {
    id: number;
    name: string;
    managed_by: string;
    tokens: { id: number; name: string; managed_by: string }[];
  }[];
  const file = accounts.find((a) => a.name === `token-${w.locationId}`);
  assert.ok(file !== undefined);
  assert.equal(file.managed_by, 'file');
  assert.deepEqual(
    file.tokens.map((tk) => [tk.name, tk.managed_by]),
    [[file.name, 'file']],
  );
  const revoke = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${file.id}/tokens/${file.tokens[0]?.id}/revoke`);
  assert.deepEqual([revoke.statusCode, revoke.json().code], [409, 'managed_by_file']);
  const add = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${file.id}/tokens`, { name: 'x', scopes: ['cfh'] });
  assert.deepEqual([add.statusCode, add.json().code], [409, 'managed_by_file']);
  assert.equal((await call(ctx.app, bearer(w.token), 'GET', '/api/callforhelp/requests?location_id=' + w.locationId)).statusCode, 200, 'still live');

  const mine = (await call(ctx.app, admin, 'POST', '/api/admin/service_accounts', { name: 'mine' })).json();
  const bad: [unknown, string][] = [
    [{ name: 'x', scopes: ['console'] }, 'scopes[0]'],
    [{ name: 'x', scopes: [] }, 'scopes'],
    [{ name: 'x', scopes: ['cfh'], expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'x', scopes: ['cfh'], expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', scopes: ['cfh'], location_ids: [w.other.locationId] }, 'location_ids'],
    [{ name: ' ', scopes: ['cfh'] }, 'name'],
  ];
  for (const [body, field] of bad) {
    const res = await call(ctx.app, admin, 'POST', `/api/admin/service_accounts/${mine.id}/tokens`, body);
    assert.equal(res.statusCode, 422, `${field}: ${res.body}`);
    assert.ok(field in res.json().errors, `${field}: ${res.body}`);
  }
});
