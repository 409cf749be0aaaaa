// The OpenID Connect relying party of single sign-on (contract section 17): the authorization code
// flow with PKCE, state and nonce, every check of the answer made by openid-client v6 (the ID token's
// signature against the provider's published keys, its issuer, audience, expiry and nonce; the
// authorization response's state and issuer). It knows nothing of people or sessions: `start` gives
// the URL to send the browser to and the flow to keep, `finish` turns the provider's redirect back
// into a verified identity, or an OidcError saying why not.
import crypto from 'node:crypto';
import * as oidc from 'openid-client';
import { checkIssuer, isLoopbackHost, safeReturnTo } from './oidc-rules.ts';

/** Why a sign-in failed; the routes pick the page (and the audit entry) from it. */
export type OidcFailure =
  /** The callback's state is not the flow's: a forged or crossed redirect (or a stale tab). */
  | 'state_mismatch'
  /** The provider answered the authorization with an error (the person cancelled, was refused). */
  | 'denied'
  /** The provider's answer failed a check: a code refused, an ID token not for us, not valid. */
  | 'rejected'
  /** The provider could not be reached, timed out or answered 5xx or nonsense; try again later. */
  | 'provider_unavailable'
  | 'missing_email'
  /** The provider says the email is not verified: it cannot name an existing person. */
  | 'unverified_email';

export class OidcError extends Error {
  readonly reason: OidcFailure;
  constructor(reason: OidcFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OidcError';
    this.reason = reason;
  }
}

/**
 * What `finish` needs of a started sign-in. The caller keeps it server-side, keyed by a hash of
 * `state` (never in a cookie the browser could replay or change), and takes it once: deleted when
 * the callback reads it, whatever the outcome, and expired after a few minutes.
 */
export interface OidcFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** A path of this service (`safeReturnTo`), where the browser goes once signed in. */
  returnTo: string;
}

export interface OidcIdentity {
  /** The provider's `sub`: stable for the person at this provider. */
  subject: string;
  email: string;
  name: string;
  /** The values of the roles claim (a string or an array of strings at the provider). */
  claimValues: string[];
  /** `email_verified`: true, or null when the provider does not say (a false one is refused here). */
  emailVerified: true | null;
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** PUBLIC_BASE_URL + /auth/oidc/callback, registered at the provider. */
  redirectUri: string;
  /** OIDC_ROLES_CLAIM: a top-level claim name, taken as it is (namespaced URIs have dots). */
  rolesClaim: string;
  /** Each request to the provider, in seconds: a hung provider must not hold a sign-in for long. */
  timeoutSeconds?: number;
}

export interface OidcClient {
  readonly issuer: string;
  start(returnTo: unknown): Promise<{ url: string; flow: OidcFlow }>;
  finish(callbackUrl: URL, flow: OidcFlow): Promise<OidcIdentity>;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

/**
 * The relying party for one provider. Throws at once when the settings cannot be right (an `http`
 * issuer off this host, an issuer that is not a URL); the provider itself is first asked at the
 * first sign-in, so a provider that is down does not stop the service from starting.
 */
export function createOidcClient(settings: OidcSettings): OidcClient {
  const issuer = checkIssuer(settings.issuer);
  if (!URL.canParse(settings.redirectUri)) throw new Error(`the OIDC redirect URI is not a URL: ${settings.redirectUri}`);
  const redirectUri = new URL(settings.redirectUri);
  const timeout = settings.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const insecure = issuer.protocol === 'http:';

  // Discovered once and kept (openid-client refetches the provider's keys itself when a token names
  // one it does not know, so rotation needs no new discovery). A failed discovery is forgotten, so
  // the next sign-in asks again; sign-ins at the same moment share one request.
  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= discover(issuer, settings, timeout, insecure).catch((err: unknown) => {
      discovered = null;
      throw err;
    });
    return discovered;
  };

  return {
    issuer: issuer.href,

    async start(returnTo) {
      const config = await configuration();
      const flow: OidcFlow = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        codeVerifier: oidc.randomPKCECodeVerifier(),
        returnTo: safeReturnTo(returnTo),
      };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri.href,
        response_type: 'code',
        scope: scopeFor(config, settings.rolesClaim),
        state: flow.state,
        nonce: flow.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, flow };
    },

    async finish(callbackUrl, flow) {
      // Checked here first for its own reason (and before asking the provider anything);
      // openid-client checks it again.
      if (!sameString(callbackUrl.searchParams.get('state'), flow.state)) {
        throw new OidcError('state_mismatch', 'the sign-in answer is not for the sign-in this browser started');
      }
      const config = await configuration();
      // Only the callback's query is taken: the token request must name the redirect URI the
      // authorization request named, whatever host or proxy the callback came through.
      const current = new URL(redirectUri);
      current.search = callbackUrl.search;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          pkceCodeVerifier: flow.codeVerifier,
          idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (idClaims === undefined) throw new OidcError('rejected', 'the provider sent no ID token');
        let claims: Record<string, unknown> = idClaims;
        // Providers put email, name and groups in the ID token or only behind the userinfo
        // endpoint (oidc-provider by default); the ID token's verified values come first.
        const wanted = ['email', 'name', settings.rolesClaim];
        if (wanted.some((claim) => claims[claim] === undefined) && config.serverMetadata().userinfo_endpoint) {
          const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
          claims = { ...userinfo, ...idClaims };
        }
        return identityFrom(claims, settings.rolesClaim);
      } catch (err) {
        throw failure(err, 'rejected');
      }
    },
  };
}

async function discover(issuer: URL, settings: OidcSettings, timeout: number, insecure: boolean): Promise<oidc.Configuration> {
  try {
    const config = await oidc.discovery(issuer, settings.clientId, { client_secret: settings.clientSecret }, clientAuth(settings.clientSecret), {
      timeout,
      // openid-client skips the ID token's signature when the token came straight from the token
      // endpoint over TLS (OIDC Core allows it); the contract wants it checked against the
      // provider's published keys all the same, and http on loopback has no TLS to lean on.
      execute: [oidc.enableNonRepudiationChecks, ...(insecure ? [oidc.allowInsecureRequests] : [])],
    });
    // A loopback issuer may use http; the endpoints this service calls must then stay on this host.
    const meta = config.serverMetadata();
    for (const endpoint of [meta.token_endpoint, meta.userinfo_endpoint, meta.jwks_uri]) {
      if (endpoint !== undefined && new URL(endpoint).protocol === 'http:' && !isLoopbackHost(new URL(endpoint).hostname)) {
        throw new OidcError('provider_unavailable', `the provider's metadata names an http endpoint off this host: ${endpoint}`);
      }
    }
    return config;
  } catch (err) {
    throw failure(err, 'provider_unavailable');
  }
}

/**
 * client_secret_basic, the method every provider must support when it says nothing
 * (openid-client's default would be client_secret_post); post when the provider lists only that.
 */
function clientAuth(secret: string): oidc.ClientAuth {
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (as, client, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    (usePost ? post : basic)(as, client, body, headers);
  };
}

/** openid email profile, and the roles claim's scope when the provider has one of that name. */
function scopeFor(config: oidc.Configuration, rolesClaim: string): string {
  const scopes = ['openid', 'email', 'profile'];
  if (config.serverMetadata().scopes_supported?.includes(rolesClaim) && !scopes.includes(rolesClaim)) scopes.push(rolesClaim);
  return scopes.join(' ');
}

function identityFrom(claims: Record<string, unknown>, rolesClaim: string): OidcIdentity {
  const subject = claims.sub as string;
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (email === '' || !email.includes('@')) throw new OidcError('missing_email', 'the provider sent no email address for this person');
  if (claims.email_verified === false || claims.email_verified === 'false') {
    throw new OidcError('unverified_email', 'the provider says this email address is not verified');
  }
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');
  const name = text(claims.name) || [text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ') || email;
  const verified = claims.email_verified === true || claims.email_verified === 'true' ? true : null;
  return { subject, email, name, claimValues: claimValues(claims[rolesClaim]), emailVerified: verified };
}

/** A string or an array of strings; anything else in it is ignored, duplicates once. */
function claimValues(value: unknown): string[] {
  const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''))];
}

/** Any error becomes an OidcError: what the provider sends never escapes as something untyped. */
function failure(err: unknown, otherwise: OidcFailure): OidcError {
  if (err instanceof OidcError) return err;
  if (err instanceof oidc.AuthorizationResponseError) {
    return new OidcError('denied', `the provider refused the sign-in: ${printable(err.error)} ${printable(err.error_description ?? '')}`.trim(), {
      cause: err,
    });
  }
  const status = httpStatus(err);
  if (unreachable(err) || (status !== undefined && status >= 500)) {
    return new OidcError('provider_unavailable', `the provider is unavailable: ${describe(err)}`, { cause: err });
  }
  return new OidcError(otherwise, `the provider's answer was refused: ${describe(err)}`, { cause: err });
}

/** A network failure or a timeout: fetch's TypeError, or openid-client's timeout and abort codes. */
function unreachable(err: unknown): boolean {
  if (err instanceof TypeError && !('code' in err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return true;
  return err instanceof Error && err.cause !== err && err.cause instanceof Error && unreachable(err.cause);
}

function httpStatus(err: unknown): number | undefined {
  if (err instanceof oidc.ResponseBodyError) return err.status;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof Response ? cause.status : undefined;
}

function describe(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError) return `${err.status} ${printable(err.error)} ${printable(err.error_description ?? '')}`.trim();
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${printable(err.cause.message)})` : '';
  return err instanceof Error ? `${printable(err.message)}${cause}` : 'an unknown failure';
}

/** What a provider wrote, fit for a log line: no control characters, not too long. */
function printable(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, ' ').slice(0, 200);
}

/** Whether the callback's value is the flow's (a flow read back from storage is not trusted to be whole). */
function sameString(a: string | null, b: unknown): boolean {
  if (a === null || typeof b !== 'string' || b === '') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
