// Single sign-on end to end (contract section 17) against a real OpenID provider (oidc-provider on
// loopback, tests/support/oidc-provider.ts): the service's own start and callback, people made at
// their first sign-in from the SSO role mappings, memberships recomputed at each sign-in while an
// administrator's stay, refusals as pages with nothing stored but the audit entry, and one sign-in
// in Chromium from the console to the provider's pages and back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../scripts/lib/free-port.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium } from '../support/browser.ts';
import { signIn, startOidcProvider, type TestAccount } from '../support/oidc-provider.ts';
import type { Teardown } from '../support/teardown.ts';
import { freshId, makeWorld, testApp, testConfig } from '../support/world.ts';
import { makePerson } from '../support/people.ts';

/** A listening service whose single sign-on is the test provider, and a world with mappings. */
async function serving(t: Teardown, accounts: TestAccount[], opts: { providerDown?: boolean } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const redirectUri = `${base}/auth/oidc/callback`;
  const provider = await startOidcProvider(t, {
    clients: [{ clientId: 'storeops', clientSecret: 'storeops-test-secret', redirectUris: [redirectUri] }],
    accounts,
  });
  if (opts.providerDown === true) await provider.close();
  const config = testConfig({ PUBLIC_BASE_URL: base, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: 'storeops', OIDC_CLIENT_SECRET: 'storeops-test-secret' });
  const ctx = await testApp({ t, config });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  const w = await makeWorld(ctx.db, ctx.clock);
  const staffGroup = `staff-${w.locationId}`;
  await applyProvisioning(ctx.db, ctx.clock, {
    sso_role_mappings: [
      { claim_value: staffGroup, organization_id: w.organizationId, role: 'staff', location_ids: [w.locationId] },
      { claim_value: `admins-${w.organizationId}`, organization_id: w.organizationId, role: 'org_admin' },
    ],
  });
  return { ...ctx, w, base, redirectUri, provider, staffGroup };
}

type Served = Awaited<ReturnType<typeof serving>>;

/** The whole sign-in over HTTP as a browser would make it: start, the provider's pages, the callback. */
async function ssoSignIn(s: Served, login: string, returnTo = '/console') {
  const start = await fetch(`${s.base}/auth/oidc/start?return_to=${encodeURIComponent(returnTo)}`, { redirect: 'manual' });
  assert.equal(start.status, 302, await start.clone().text());
  const flowCookie = (start.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
  const callback = await signIn(start.headers.get('location') as string, login, s.redirectUri);
  const back = await fetch(callback, { redirect: 'manual', headers: { cookie: flowCookie } });
  const session =
    back.headers
      .getSetCookie()
      .find((c) => c.startsWith('storeops_session='))
      ?.split(';')[0] ?? null;
  return { back, session, callback, flowCookie, text: back.status === 302 ? '' : await back.text() };
}

const sessionOf = async (s: Served, cookie: string) =>
  (await fetch(`${s.base}/api/session`, { headers: { cookie } })).json() as Promise<Record<string, unknown>>;

const account = (sub: string, groups: string[]): TestAccount => ({
  sub,
  email: `${sub}@example.com`,
  email_verified: true,
  name: `${sub[0]?.toUpperCase()}${sub.slice(1)} Lee`,
  groups,
});

test('the first sign-in makes the person with the role their group maps to, and lands on return_to', async (t) => {
  const ada = account(`ada${freshId()}`, []);
  const s = await serving(t, [ada]);
  s.provider.accounts.set(ada.sub, { ...ada, groups: [s.staffGroup, 'unrelated-group'] });
  const { back, session } = await ssoSignIn(s, ada.sub, '/console#/queue');
  assert.equal(back.status, 302);
  assert.equal(back.headers.get('location'), '/console#/queue');
  assert.ok(session !== null);
  const view = await sessionOf(s, session);
  assert.equal(view.signed_in, true);
  assert.deepEqual(view.person, { id: (view.person as { id: number }).id, name: ada.name, email: ada.email });
  assert.deepEqual(view.memberships, [{ role: 'staff', organization_id: s.w.organizationId, location_ids: [s.w.locationId] }]);
  const actions = await s.db.query<{ action: string }>('SELECT action FROM audit_entries WHERE actor_name = $1 ORDER BY id', [ada.name]);
  assert.deepEqual(
    actions.map((a) => a.action),
    ['person.created', 'membership.granted', 'sign_in.succeeded'],
  );
});

test("a group removed at the provider removes its membership at the next sign-in, and an administrator's grant stays", async (t) => {
  const bo = account(`bo${freshId()}`, []);
  const s = await serving(t, [bo]);
  s.provider.accounts.set(bo.sub, { ...bo, groups: [s.staffGroup, `admins-${s.w.organizationId}`] });
  const first = await ssoSignIn(s, bo.sub);
  assert.equal(first.back.status, 302);
  const [person] = await s.db.query<{ id: number }>('SELECT id FROM people WHERE lower(email) = lower($1)', [bo.email]);
  const second = freshId();
  await applyProvisioning(s.db, s.clock, { locations: [{ id: second, organization_id: s.w.organizationId, name: 'Second store' }] });
  await s.db.query(
    "INSERT INTO memberships (person_id, organization_id, role, location_id, granted_by, created_at) VALUES ($1, $2, 'staff', $3, 'admin', now())",
    [person?.id, s.w.organizationId, second],
  );
  s.provider.accounts.set(bo.sub, { ...bo, groups: [s.staffGroup] });
  const again = await ssoSignIn(s, bo.sub);
  assert.equal(again.back.status, 302);
  const grants = await s.db.query<{ role: string; location_id: number | null; granted_by: string }>(
    'SELECT role, location_id, granted_by FROM memberships WHERE person_id = $1 ORDER BY granted_by, location_id',
    [person?.id],
  );
  assert.deepEqual(grants, [
    { role: 'staff', location_id: second, granted_by: 'admin' },
    { role: 'staff', location_id: s.w.locationId, granted_by: 'sso' },
  ]);
  s.provider.accounts.set(bo.sub, { ...bo, groups: [] });
  const third = await ssoSignIn(s, bo.sub);
  assert.equal(third.back.status, 302, "the administrator's grant still lets them in");
  assert.deepEqual((await sessionOf(s, third.session as string)).memberships, [{ role: 'staff', organization_id: s.w.organizationId, location_ids: [second] }]);
});

test('no mapping for any of the groups: refused with a page that says to ask an administrator, and nothing stored but the audit entry', async (t) => {
  const cy = account(`cy${freshId()}`, ['nobody-maps-this']);
  const s = await serving(t, [cy]);
  const { back, session, text } = await ssoSignIn(s, cy.sub);
  assert.equal(back.status, 403);
  assert.equal(session, null);
  assert.match(text, /Ask an administrator to give you one/);
  assert.deepEqual(await s.db.query('SELECT id FROM people WHERE lower(email) = lower($1)', [cy.email]), []);
  const [entry] = await s.db.query<{ action: string }>("SELECT action FROM audit_entries WHERE actor_name = $1 AND action = 'sign_in.failed'", [cy.email]);
  assert.ok(entry !== undefined);
});

test('a replayed callback, a callback in another browser, and a tampered state sign nobody in', async (t) => {
  const di = account(`di${freshId()}`, []);
  const s = await serving(t, [di]);
  s.provider.accounts.set(di.sub, { ...di, groups: [s.staffGroup] });
  const first = await ssoSignIn(s, di.sub);
  assert.equal(first.back.status, 302);
  const replayed = await fetch(first.callback, { redirect: 'manual', headers: { cookie: first.flowCookie } });
  assert.equal(replayed.status, 400);
  assert.equal(
    replayed.headers.getSetCookie().some((c) => c.startsWith('storeops_session=') && !c.startsWith('storeops_session=;')),
    false,
  );

  const start = await fetch(`${s.base}/auth/oidc/start`, { redirect: 'manual' });
  const flowCookie = (start.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
  const callback = await signIn(start.headers.get('location') as string, di.sub, s.redirectUri);
  const elsewhere = await fetch(callback, { redirect: 'manual' });
  assert.equal(elsewhere.status, 400, 'another browser has no flow cookie');
  const tampered = new URL(callback);
  tampered.searchParams.set('state', 'tampered-state');
  const refused = await fetch(tampered, { redirect: 'manual', headers: { cookie: flowCookie } });
  assert.equal(refused.status, 403);
  assert.match(await refused.text(), /could not be accepted/);
});

test('return_to cannot leave the service: another site is replaced by the console', async (t) => {
  const ed = account(`ed${freshId()}`, []);
  const s = await serving(t, [ed]);
  s.provider.accounts.set(ed.sub, { ...ed, groups: [s.staffGroup] });
  for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
    const { back } = await ssoSignIn(s, ed.sub, evil);
    assert.equal(back.status, 302);
    assert.equal(back.headers.get('location'), '/console', evil);
  }
});

test('a provider that is down gives a page saying sign-in is unavailable and how an administrator gets in, never a 5xx', async (t) => {
  const s = await serving(t, [], { providerDown: true });
  const res = await fetch(`${s.base}/auth/oidc/start?return_to=/console`, { redirect: 'manual' });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /not answering/);
  assert.match(text, /email and password/);
});

test("signing in from the console in Chromium: the provider's pages, then the console with the person's name", { skip: skipWithoutChromium }, async (t) => {
  const fay = account(`fay${freshId()}`, []);
  const s = await serving(t, [fay]);
  s.provider.accounts.set(fay.sub, { ...fay, groups: [`admins-${s.w.organizationId}`] });
  const page = await (await browserContext(t)).newPage();
  await page.goto(`${s.base}/auth/oidc/start?return_to=/console`);
  await page.locator('input[name="login"]').fill(fay.sub);
  await page.locator('input[name="password"]').fill('whatever the dev page accepts');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/console');
  assert.match((await page.locator('#signed-in-as').textContent()) ?? '', new RegExp(`^${fay.name} · organization admin$`));
});

test("another provider account claiming a signed-in person's email, or a password holder's without a verified email, is refused", async (t) => {
  const gil = account(`gil${freshId()}`, []);
  const s = await serving(t, [gil]);
  s.provider.accounts.set(gil.sub, { ...gil, groups: [s.staffGroup] });
  assert.equal((await ssoSignIn(s, gil.sub)).back.status, 302, 'the first sign-in binds the person to this account');
  const impostor = `imp${freshId()}`;
  s.provider.accounts.set(impostor, { sub: impostor, email: gil.email, email_verified: true, name: 'Not Gil', groups: [s.staffGroup] });
  const taken = await ssoSignIn(s, impostor);
  assert.equal(taken.back.status, 403);
  assert.match(taken.text, /belongs to another account/);

  // The break-glass administrator has a password and has never signed in with the provider.
  const root = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Root' });
  const squatter = `sq${freshId()}`;
  s.provider.accounts.set(squatter, { sub: squatter, email: root.email, name: 'Root?', groups: [`admins-${s.w.organizationId}`] });
  const refused = await ssoSignIn(s, squatter);
  assert.equal(refused.back.status, 403, 'no email_verified from the provider');
  s.provider.accounts.set(squatter, { sub: squatter, email: root.email, email_verified: true, name: 'Root', groups: [`admins-${s.w.organizationId}`] });
  assert.equal((await ssoSignIn(s, squatter)).back.status, 302, 'a verified address links the person');
});
