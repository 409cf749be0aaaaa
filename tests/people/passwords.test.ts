// Passwords (contract section 17): the per-email throttle counted on the database under
// concurrency, the break-glass administrator's one-time password and its forced change, and
// PASSWORD_SIGN_IN=admins letting only organization admins use one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { addBreakGlassAdmin } from '../../src/people/break-glass.ts';
import { hashSecret, verifySecret } from '../../src/people/passwords.ts';
import { consoleWorld } from '../console/support.ts';
import { fromPage, makePerson, signInHttp } from '../support/people.ts';
import { freshId, testApp, testConfig } from '../support/world.ts';

const signIn = (ctx: Awaited<ReturnType<typeof testApp>>, email: string, password: string) =>
  ctx.app.inject({ method: 'POST', url: '/api/session', payload: { email, password } });

test('10 failed passwords for one email in 15 minutes: 429 with Retry-After for that email only, even when they come at once', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const other = await makePerson(ctx.db, clock, w.organizationId, { name: 'Oli' });
  const wrong = await Promise.all(Array.from({ length: 14 }, (_, i) => signIn(ctx, w.admin.email.toUpperCase(), `wrong-password-${i}`)));
  assert.deepEqual(wrong.map((r) => r.statusCode).sort(), [...Array(10).fill(401), ...Array(4).fill(429)]);
  const refused = await signIn(ctx, w.admin.email, w.admin.password);
  assert.equal(refused.statusCode, 429, 'the right password too, while the email is throttled');
  assert.equal(refused.json().code, 'too_many_attempts');
  const retryAfter = Number(refused.headers['retry-after']);
  assert.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, String(retryAfter));
  assert.equal((await signIn(ctx, other.email, other.password)).statusCode, 200, 'nobody else is affected');
  clock.advance(15 * 60_000 + 1000);
  assert.equal((await signIn(ctx, w.admin.email, w.admin.password)).statusCode, 200, 'after 15 minutes');
});

test('the break-glass administrator signs in with the one-time password, must change it first, and then works', async (t) => {
  const ctx = await testApp({ t });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const email = `root-${freshId()}@example.com`;
  const made = await addBreakGlassAdmin(ctx, { email, organizationId: w.organizationId });
  assert.match(made.password, /^[a-zA-Z0-9]{20}$/);
  const s = await signInHttp(ctx.app, { email, password: made.password });
  const session = await ctx.app.inject({ method: 'GET', url: '/api/session', headers: { cookie: s.cookie } });
  assert.equal(session.json().must_change_password, true);
  const queue = await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } });
  assert.equal(queue.statusCode, 403);
  assert.equal(queue.json().code, 'password_change_required');
  const change = (current: string, next: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/session/password', headers: fromPage(s), payload: { current_password: current, new_password: next } });
  const short = await change(made.password, 'too-short');
  assert.equal(short.statusCode, 422);
  assert.deepEqual(Object.keys(short.json().errors), ['new_password']);
  const wrong = await change('not-the-one-time-password', 'a long enough new password');
  assert.equal(wrong.statusCode, 422);
  assert.deepEqual(Object.keys(wrong.json().errors), ['current_password']);
  const done = await change(made.password, 'a long enough new password');
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json().must_change_password, false);
  assert.equal((await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie } })).statusCode, 200);
  assert.equal((await signIn(ctx, email, made.password)).statusCode, 401, 'the one-time password is used up');
  assert.equal((await signIn(ctx, email, 'a long enough new password')).statusCode, 200);
  const audit = JSON.stringify(await ctx.db.query('SELECT * FROM audit_entries WHERE organization_id = $1', [w.organizationId]));
  assert.ok(!audit.includes(made.password) && !audit.includes('a long enough new password'), 'no password in the audit log');
  assert.match(audit, /person\.password_changed/);
});

test('PASSWORD_SIGN_IN=admins: an org_admin signs in with a password, staff are told to use single sign-on', async (t) => {
  const ctx = await testApp({ t, config: testConfig({ PASSWORD_SIGN_IN: 'admins' }) });
  const w = await consoleWorld(ctx.db, ctx.clock);
  const staff = await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Sid', role: 'staff', locationIds: [w.locationId] });
  assert.equal((await signIn(ctx, w.admin.email, w.admin.password)).statusCode, 200);
  const refused = await signIn(ctx, staff.email, staff.password);
  assert.equal(refused.statusCode, 403);
  assert.match(refused.json().message, /single sign-on/);
});

test('a stored password verifies only itself, and the hash never holds it', async () => {
  const hash = await hashSecret('correct horse battery staple');
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.ok(!hash.includes('correct horse'));
  assert.equal(await verifySecret('correct horse battery staple', hash), true);
  assert.equal(await verifySecret('correct horse battery stapler', hash), false);
  assert.equal(await verifySecret('anything', null), false);
  assert.equal(await verifySecret('anything', 'not a phc string'), false);
});

test('failures spread over the window still lock the email for the whole 15 minutes after the tenth', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  for (let i = 0; i < 10; i++) {
    assert.equal((await signIn(ctx, w.admin.email, `wrong-password-${i}`)).statusCode, 401);
    clock.advance(85_000);
  }
  const refused = await signIn(ctx, w.admin.email, w.admin.password);
  assert.equal(refused.statusCode, 429);
  assert.equal(Number(refused.headers['retry-after']), 15 * 60 - 85);
  clock.advance(13 * 60_000);
  assert.equal((await signIn(ctx, w.admin.email, w.admin.password)).statusCode, 429, 'the oldest failures aged out, the lock did not');
  clock.advance(60_000);
  assert.equal((await signIn(ctx, w.admin.email, w.admin.password)).statusCode, 200);
});
