// Single sign-on's relying party (contract section 17) against a real OpenID provider (oidc-provider
// on loopback): a person signs in through the provider's pages in Chromium and comes back with
// their claims; every answer the provider or an attacker could make up instead is refused with a
// typed reason: a crossed state, a code used twice or issued to another client, an ID token of
// another nonce, audience or issuer, expired or not signed by the provider, a provider that is down.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import * as oidc from 'openid-client';
import { freePort } from '../../scripts/lib/free-port.ts';
import { createOidcClient, OidcError, type OidcClient, type OidcFailure, type OidcFlow } from '../../src/people/oidc.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { signIn, startOidcProvider, type TestAccount } from '../support/oidc-provider.ts';
import { closeWith, type Teardown } from '../support/teardown.ts';

/** `signIn` stops at the redirect to it, so nothing listens there. */
const REDIRECT_URI = 'http://127.0.0.1:9/auth/oidc/callback';
const STOREOPS = { clientId: 'storeops', clientSecret: 'storeops-test-secret' };
const OTHER = { clientId: 'other-app', clientSecret: 'other-app-test-secret' };

const ada = (): TestAccount => ({
  sub: 'ada',
  email: 'Ada@Example.test',
  email_verified: true,
  name: 'Ada Lovelace',
  groups: ['store-12-staff', 'store-14-admins'],
});

async function world(t: Teardown, opts: { accounts?: TestAccount[]; redirectUris?: string[]; port?: number } = {}) {
  const redirectUris = [REDIRECT_URI, ...(opts.redirectUris ?? [])];
  const provider = await startOidcProvider(t, {
    clients: [STOREOPS, OTHER].map((c) => ({ ...c, redirectUris })),
    accounts: opts.accounts ?? [ada()],
    port: opts.port,
  });
  return { provider, rp: relyingParty(provider.issuer), other: relyingParty(provider.issuer, OTHER) };
}

function relyingParty(issuer: string, client = STOREOPS, redirectUri = REDIRECT_URI): OidcClient {
  return createOidcClient({ issuer, ...client, redirectUri, rolesClaim: 'groups' });
}

/** A started sign-in, walked through the provider's pages: the redirect back and the flow to finish it. */
async function signedIn(rp: OidcClient, login = 'ada'): Promise<{ callback: URL; flow: OidcFlow }> {
  const { url, flow } = await rp.start('/console');
  return { callback: await signIn(url, login, REDIRECT_URI), flow };
}

/** Refused with `reason`, for the cause `because` names (openid-client's or the provider's words). */
async function refused(promise: Promise<unknown>, reason: OidcFailure, because?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof OidcError, `not an OidcError: ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    if (because) assert.match(err.message, because);
    return true;
  });
}

/** A redirect back as the provider would make it, with these parameters. */
function callbackWith(params: Record<string, string>): URL {
  const url = new URL(REDIRECT_URI);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}

/** The loopback page the browser is sent back to; resolves with the URL it was called at. */
async function redirectTarget(t: Teardown): Promise<{ uri: string; called: Promise<URL> }> {
  let called!: (url: URL) => void;
  const calledAt = new Promise<URL>((resolve) => (called = resolve));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname === '/auth/oidc/callback') called(url);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeWith(t, () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    return closed;
  });
  return { uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/oidc/callback`, called: calledAt };
}

test('a person signs in on the provider pages in Chromium and comes back with their email, name and groups', { skip }, async (t) => {
  const target = await redirectTarget(t);
  const { provider } = await world(t, { redirectUris: [target.uri] });
  const rp = relyingParty(provider.issuer, STOREOPS, target.uri);
  const { url, flow } = await rp.start('/console/queue');

  const page = await (await browserContext(t)).newPage();
  await page.goto(url);
  await page.locator('input[name="login"]').fill('ada');
  await page.locator('input[name="password"]').fill('whatever the dev page accepts');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  // The consent page of the provider's development interactions.
  await page.getByRole('button', { name: 'Continue' }).click();
  const callback = await target.called;

  assert.equal(flow.returnTo, '/console/queue');
  assert.deepEqual(await rp.finish(callback, flow), {
    subject: 'ada',
    email: 'Ada@Example.test',
    name: 'Ada Lovelace',
    claimValues: ['store-12-staff', 'store-14-admins'],
    emailVerified: true,
  });
});

test('the authorization URL asks for a code with PKCE (S256), state, nonce and the roles claim scope', async (t) => {
  const { provider, rp } = await world(t);
  const { url, flow } = await rp.start('//evil.example/');
  const params = new URL(url).searchParams;
  assert.ok(url.startsWith(`${provider.issuer}/`));
  assert.equal(params.get('response_type'), 'code');
  assert.equal(params.get('client_id'), STOREOPS.clientId);
  assert.equal(params.get('redirect_uri'), REDIRECT_URI);
  assert.equal(params.get('state'), flow.state);
  assert.equal(params.get('nonce'), flow.nonce);
  assert.equal(params.get('code_challenge_method'), 'S256');
  assert.equal(params.get('code_challenge'), await oidc.calculatePKCECodeChallenge(flow.codeVerifier));
  assert.deepEqual(params.get('scope')?.split(' '), ['openid', 'email', 'profile', 'groups']);
  assert.equal(flow.returnTo, '/console', 'a return_to off this service is replaced');
  const again = await rp.start('/console');
  assert.notEqual(again.flow.state, flow.state);
  assert.notEqual(again.flow.codeVerifier, flow.codeVerifier);
});

test('the groups are read again at each sign-in: a group removed at the provider is gone at the next', async (t) => {
  const { provider, rp } = await world(t);
  const first = await signedIn(rp);
  assert.deepEqual((await rp.finish(first.callback, first.flow)).claimValues, ['store-12-staff', 'store-14-admins']);

  provider.accounts.set('ada', { ...ada(), groups: ['store-12-staff'] });
  const second = await signedIn(rp);
  assert.deepEqual((await rp.finish(second.callback, second.flow)).claimValues, ['store-12-staff']);

  provider.accounts.set('ada', { ...ada(), groups: 'store-14-admins' });
  const third = await signedIn(rp);
  assert.deepEqual((await rp.finish(third.callback, third.flow)).claimValues, ['store-14-admins'], 'a single string is one value');
});

test('a redirect back whose state is not the flow’s is refused as state_mismatch', async (t) => {
  const { rp } = await world(t);
  const { callback, flow } = await signedIn(rp);
  const tampered = new URL(callback);
  tampered.searchParams.set('state', `${flow.state}x`);
  await refused(rp.finish(tampered, flow), 'state_mismatch');
  tampered.searchParams.delete('state');
  await refused(rp.finish(tampered, flow), 'state_mismatch');
  const other = await rp.start('/console');
  await refused(rp.finish(callback, other.flow), 'state_mismatch');
});

test('a code is exchanged once: the same redirect back a second time is refused', async (t) => {
  const { rp } = await world(t);
  const { callback, flow } = await signedIn(rp);
  assert.equal((await rp.finish(callback, flow)).email, 'Ada@Example.test');
  await refused(rp.finish(callback, flow), 'rejected', /invalid_grant/);
});

test('an ID token carrying another nonce than the flow’s is refused', async (t) => {
  const { rp } = await world(t);
  const { callback, flow } = await signedIn(rp);
  await refused(rp.finish(callback, { ...flow, nonce: oidc.randomNonce() }), 'rejected', /"nonce" claim value/);
});

test('a code exchanged without the verifier of its PKCE challenge is refused', async (t) => {
  const { rp } = await world(t);
  const { callback, flow } = await signedIn(rp);
  await refused(rp.finish(callback, { ...flow, codeVerifier: oidc.randomPKCECodeVerifier() }), 'rejected', /invalid_grant/);
});

test('a code issued to another client of the same provider is refused', async (t) => {
  const { rp, other } = await world(t);
  const { callback, flow } = await signedIn(other);
  await refused(rp.finish(callback, flow), 'rejected', /invalid_grant/);
});

test('a redirect back from another provider (a mix-up) is refused', async (t) => {
  const { rp } = await world(t);
  const elsewhere = await world(t);
  const { url, flow } = await rp.start('/console');
  // The same request, answered by the other provider, which knows the same client.
  const mixedUp = new URL(url);
  mixedUp.host = new URL(elsewhere.provider.issuer).host;
  const callback = await signIn(mixedUp.href, 'ada', REDIRECT_URI);
  assert.equal(callback.searchParams.get('iss'), elsewhere.provider.issuer);
  await refused(rp.finish(callback, flow), 'rejected', /"iss" \(issuer\) response parameter/);
});

/** The token endpoint answers an ID token made of `claims` (the flow's own unless replaced). */
async function forgedAnswer(t: Teardown, claims: (valid: Record<string, unknown>) => Record<string, unknown>, opts: { foreignKey?: boolean } = {}) {
  const { provider, rp } = await world(t);
  const { flow } = await rp.start('/console');
  const now = Math.floor(Date.now() / 1000);
  const valid = { iss: provider.issuer, aud: STOREOPS.clientId, sub: 'ada', nonce: flow.nonce, iat: now, exp: now + 300, email: 'ada@example.test' };
  provider.replaceNextTokenResponse(200, {
    access_token: 'forged',
    token_type: 'Bearer',
    expires_in: 300,
    id_token: provider.forgeIdToken(claims(valid), opts),
  });
  return rp.finish(callbackWith({ code: 'forged', state: flow.state, iss: provider.issuer }), flow);
}

test('an ID token made like the provider’s passes, so the refusals below are each for their one change', async (t) => {
  assert.equal((await forgedAnswer(t, (valid) => ({ ...valid, name: 'Ada', groups: ['store-12-staff'] }))).name, 'Ada');
});

for (const [behaviour, claims, because] of [
  ['for another audience', (valid) => ({ ...valid, aud: OTHER.clientId }), /"aud" \(audience\)/],
  ['from another issuer', (valid) => ({ ...valid, iss: 'http://127.0.0.1:9' }), /"iss" \(issuer\)/],
  ['that has expired', (valid) => ({ ...valid, iat: Number(valid.iat) - 900, exp: Number(valid.iat) - 600 }), /"exp" \(expiration time\)/],
  ['without a nonce', ({ nonce: _nonce, ...valid }) => valid, /"nonce" \(nonce\) claim missing/],
] satisfies [string, (valid: Record<string, unknown>) => Record<string, unknown>, RegExp][]) {
  test(`an ID token ${behaviour} is refused even when the provider's token endpoint hands it over`, async (t) => {
    await refused(forgedAnswer(t, claims), 'rejected', because);
  });
}

test('an ID token not signed with the provider’s published key is refused', async (t) => {
  await refused(
    forgedAnswer(t, (valid) => valid, { foreignKey: true }),
    'rejected',
    /signature/,
  );
});

test('a person who cancels at the provider comes back denied', async (t) => {
  const { provider, rp } = await world(t);
  const { flow } = await rp.start('/console');
  const callback = callbackWith({ error: 'access_denied', error_description: 'End-User aborted interaction', state: flow.state, iss: provider.issuer });
  await refused(rp.finish(callback, flow), 'denied');
});

test('a person the provider gives no email, or an unverified one, is refused', async (t) => {
  const { rp } = await world(t, {
    accounts: [
      { sub: 'noemail', name: 'No Email', groups: [] },
      { ...ada(), sub: 'unverified', email_verified: false },
    ],
  });
  const bare = await signedIn(rp, 'noemail');
  await refused(rp.finish(bare.callback, bare.flow), 'missing_email');
  const unverified = await signedIn(rp, 'unverified');
  await refused(rp.finish(unverified.callback, unverified.flow), 'unverified_email');
});

test('a provider down when the first sign-in starts answers provider_unavailable, and is found once it is up', async (t) => {
  const port = await freePort();
  const rp = relyingParty(`http://127.0.0.1:${port}`);
  await refused(rp.start('/console'), 'provider_unavailable');
  await refused(
    rp.finish(callbackWith({ code: 'x', state: 's' }), { state: 's', nonce: 'n', codeVerifier: 'v', returnTo: '/console' }),
    'provider_unavailable',
  );

  const { provider } = await world(t, { port });
  assert.equal(provider.issuer, `http://127.0.0.1:${port}`);
  const { callback, flow } = await signedIn(rp);
  assert.equal((await rp.finish(callback, flow)).subject, 'ada');
});

test('a provider that does not answer within the timeout, or names another issuer than configured, is unavailable', async (t) => {
  const silent = http.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  closeWith(t, () => {
    const closed = new Promise((resolve) => silent.close(resolve));
    silent.closeAllConnections();
    return closed;
  });
  const port = (silent.address() as AddressInfo).port;
  const hung = createOidcClient({ issuer: `http://127.0.0.1:${port}`, ...STOREOPS, redirectUri: REDIRECT_URI, rolesClaim: 'groups', timeoutSeconds: 0.2 });
  await refused(hung.start('/console'), 'provider_unavailable', /timed out/);

  const { provider } = await world(t);
  const renamed = relyingParty(provider.issuer.replace('127.0.0.1', 'localhost'));
  await refused(renamed.start('/console'), 'provider_unavailable', /issuer/);
});

test('a provider that goes away, or answers 5xx or nonsense, at the token request is refused with a typed reason', async (t) => {
  const { provider, rp } = await world(t);
  const broken = await signedIn(rp);
  provider.replaceNextTokenResponse(503, '<html>upstream down</html>');
  await refused(rp.finish(broken.callback, broken.flow), 'provider_unavailable', /status code/);

  const garbled = await signedIn(rp);
  provider.replaceNextTokenResponse(200, '{"access_token": ');
  await refused(rp.finish(garbled.callback, garbled.flow), 'rejected', /parse/);

  const late = await signedIn(rp);
  await provider.close();
  await refused(rp.finish(late.callback, late.flow), 'provider_unavailable', /fetch failed/);
});
