// A real OpenID provider for the single sign-on tests: oidc-provider on a loopback port, with its own
// development login and consent pages (devInteractions: any login is the account's `sub`, the
// password is ignored), so Chromium or `signIn` below can walk the real pages and get a real code.
// Its accounts are a map the test changes between sign-ins. For the provider that misbehaves, the
// test can forge ID tokens signed with the provider's own key (or another) and have the token
// endpoint answer one of them: the relying party's checks are then tested one at a time.
import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import Provider, { type Configuration, type JWK } from 'oidc-provider';
import { closeWith, type Teardown } from './teardown.ts';

export interface TestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[] | string;
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface TestOidcProvider {
  issuer: string;
  /** The accounts the login page accepts, by `sub`; change them between sign-ins. */
  accounts: Map<string, TestAccount>;
  /** A compact JWS of `claims` (ES256): signed with the provider's published key unless `foreignKey`. */
  forgeIdToken(claims: Record<string, unknown>, opts?: { foreignKey?: boolean }): string;
  /** The next request to the token endpoint gets this answer instead of the provider's. */
  replaceNextTokenResponse(status: number, body: unknown): void;
  close(): Promise<void>;
}

export interface TestOidcProviderOptions {
  clients: TestClient[];
  accounts?: TestAccount[];
  /** A fixed port (a test that starts the provider after the relying party was made); else any free one. */
  port?: number;
}

/** Fixed test values: cookies signed with a known key (nothing here protects anything real). */
const COOKIE_KEYS = ['storeops-test-oidc-provider-cookie-key'];

/** Starts the provider on 127.0.0.1; it closes with `t` (or at the file's end). */
export async function startOidcProvider(t: Teardown | undefined, opts: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const accounts = new Map((opts.accounts ?? []).map((account) => [account.sub, account]));
  const { signing, foreign } = testKeys();
  let nextTokenResponse: { status: number; body: unknown } | null = null;

  // Listen first: the issuer names the port, and the provider is made from the issuer.
  let handle: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  const configuration: Configuration = {
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    // oidc-provider requires PKCE of public clients only by default; the contract wants it always.
    pkce: { required: () => true },
    jwks: { keys: [signing.privateJwk] },
    cookies: { keys: COOKIE_KEYS },
    // Each key is a scope and the claims it releases (`groups` is the roles claim of the tests).
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    features: { devInteractions: { enabled: true } },
    // Set, so that the provider does not print a notice for each default it falls back to.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 3600 },
    renderError: (ctx, out) => {
      ctx.type = 'text/plain';
      ctx.body = `${out.error}: ${out.error_description ?? ''}`;
    },
    findAccount: (_ctx, sub) => {
      if (!accounts.has(sub)) return undefined;
      // Read at each use, so a group removed between two sign-ins is gone at the second.
      return { accountId: sub, claims: () => ({ ...accounts.get(sub), sub }) };
    },
  };
  const provider = withoutDevelopmentWarnings(() => new Provider(issuer, configuration));
  const callback = provider.callback();
  const tokenPath = '/token'; // oidc-provider's default route, as its metadata names it
  handle = (req, res) => {
    if (nextTokenResponse !== null && req.method === 'POST' && req.url === tokenPath) {
      const { status, body } = nextTokenResponse;
      nextTokenResponse = null;
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
      return;
    }
    void callback(req, res);
  };

  let closed: Promise<void> | null = null;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  closeWith(t, close);

  return {
    issuer,
    accounts,
    forgeIdToken: (claims, o = {}) => (o.foreignKey ? foreign : signing).sign(claims),
    replaceNextTokenResponse: (status, body) => {
      nextTokenResponse = { status, body };
    },
    close,
  };
}

/**
 * The provider warns, at every start, that its in-memory store and development pages are not for
 * production: true, and why it is a test's provider; the warnings would be all a test run prints.
 */
function withoutDevelopmentWarnings<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!(typeof args[0] === 'string' && args[0].includes('development-only'))) warn(...args);
  };
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

interface SigningKey {
  privateJwk: JWK;
  sign(claims: Record<string, unknown>): string;
}

let keys: { signing: SigningKey; foreign: SigningKey } | null = null;

/**
 * The file's two RS256 keys (RS256: every relying party's default; an RSA key takes a while to
 * make, so once a file). The foreign one has the same `kid`, so a token it signs names the
 * provider's key and fails on its signature, not on a key lookup.
 */
function testKeys(): { signing: SigningKey; foreign: SigningKey } {
  keys ??= { signing: signingKey('test-oidc-signing'), foreign: signingKey('test-oidc-signing') };
  return keys;
}

function signingKey(kid: string): SigningKey {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } as JWK;
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    privateJwk,
    sign(claims) {
      const input = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(claims)}`;
      return `${input}.${crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    },
  };
}

/**
 * Signs `login` in at the provider the way a browser would, without one: follows the authorization
 * URL's redirects with the provider's cookies, submits the login and consent pages, and returns
 * the URL the provider sends back to the redirect URI (with the code, or an error).
 */
export async function signIn(authorizationUrl: string, login: string, redirectUri: string): Promise<URL> {
  const cookies = new Map<string, string>();
  let next: { url: string; form?: URLSearchParams } = { url: authorizationUrl };
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(next.url, {
      method: next.form ? 'POST' : 'GET',
      body: next.form,
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (location !== null) {
      const to = new URL(location, next.url);
      if (to.href.startsWith(redirectUri)) return to;
      next = { url: to.href };
      continue;
    }
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (res.status !== 200 || action === undefined || prompt === undefined) {
      throw new Error(`the provider answered ${res.status} at ${next.url}: ${page.slice(0, 400)}`);
    }
    // The login page takes any login as the account's `sub` and ignores the password.
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    next = { url: new URL(action.replaceAll('&amp;', '&'), next.url).href, form };
  }
  throw new Error('the provider never sent the browser back to the redirect URI');
}
