// Single sign-on over HTTP (contract section 17): startSsoSignIn sends the browser to the identity
// provider; finishSsoSignIn is where the provider sends it back. Both answer a browser, so a refusal
// or a provider that is down is a page in words a person understands (never a 5xx), saying what to
// do, and how an administrator can still get in.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { auditOriginOf } from '../audit/record.ts';
import { escapeHtml } from '../cfh/pages.ts';
import { AppError } from '../http/errors.ts';
import { errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { cookieOf, sessionCookieHeader } from './cookies.ts';
import { answersUncached } from './guard.ts';
import { finishSso, startSso, type SsoDeps } from './sso.ts';
import { SSO_FLOW_SECONDS } from './sso-store.ts';

export interface SsoRouteDeps extends Omit<SsoDeps, 'oidc'> {
  /** null when single sign-on is not configured. */
  oidc: SsoDeps['oidc'] | null;
  publicBaseUrl: string;
}

const FLOW_COOKIE = 'storeops_sso';

function page(reply: FastifyReply, status: number, title: string, lines: string[]): FastifyReply {
  const body = lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('');
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(title)} · storeops</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}</style></head>` +
        `<body><main><h1>${escapeHtml(title)}</h1>${body}<p><a href="/console">Back to sign-in</a></p></main></body></html>`,
    );
}

const UNAVAILABLE = [
  'The identity provider is not answering right now, so single sign-on cannot finish. Try again in a few minutes.',
  'An organization administrator can still sign in with their email and password on the sign-in page (or make a one-time password with `npm run people -- add-admin`).',
];

export async function ssoRoutes(fastify: FastifyInstance, deps: SsoRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  answersUncached(app);
  const secure = new URL(deps.publicBaseUrl).protocol === 'https:';
  const flowCookie = (value: string | null) =>
    [
      `${FLOW_COOKIE}=${value ?? ''}`,
      `Max-Age=${value === null ? 0 : SSO_FLOW_SECONDS}`,
      'Path=/auth/oidc',
      'HttpOnly',
      'SameSite=Lax',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
  const configured = () => {
    if (deps.oidc === null) throw new AppError(404, 'not_found', 'single sign-on is not set up here');
    return { ...deps, oidc: deps.oidc };
  };
  const pages = { 200: Type.String({ description: 'text/html: a page saying the provider is unavailable, and how an admin can still get in' }) };

  app.get(
    '/auth/oidc/start',
    {
      schema: {
        operationId: 'startSsoSignIn',
        tags: ['people'],
        security: [],
        summary: 'Sign in with the identity provider',
        description:
          'Redirects the browser to the OpenID provider (authorization code with PKCE, state and nonce). `return_to` is where the browser ' +
          'lands after signing in: a path of this service, anything else is ignored. A provider that does not answer: a page saying so (200).',
        querystring: Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 2000 })) }),
        produces: ['text/html'],
        response: {
          302: Type.Null({ description: "to the provider's sign-in page" }),
          ...pages,
          ...errorResponses({ 404: 'single sign-on is not set up', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request, reply) => {
      const started = await startSso(configured(), request.query.return_to);
      if ('kind' in started) return page(reply, 200, 'Sign-in is unavailable', UNAVAILABLE);
      return reply.header('set-cookie', flowCookie(started.browser)).redirect(started.url, 302);
    },
  );

  app.get(
    '/auth/oidc/callback',
    {
      schema: {
        operationId: 'finishSsoSignIn',
        tags: ['people'],
        security: [],
        summary: "The identity provider's redirect back",
        description:
          'Checks the answer (state, PKCE, the ID token: signature, issuer, audience, expiry, nonce), finds or makes the person, grants what ' +
          'the SSO role mappings give, sets the session cookie and redirects to `return_to`. Refused (no role, disabled, an answer not for ' +
          'this browser): a page saying what to do (403, or 400 for an expired or foreign sign-in).',
        querystring: Type.Object({}, { additionalProperties: true }),
        produces: ['text/html'],
        response: {
          302: Type.Null({ description: 'signed in: to return_to' }),
          ...pages,
          400: Type.String({ description: 'text/html: the sign-in expired or was not started in this browser' }),
          403: Type.String({ description: 'text/html: refused (no role, disabled, the answer was not accepted)' }),
          ...errorResponses({ 404: 'single sign-on is not set up', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request, reply) => {
      const sso = configured();
      const callback = new URL(request.url, deps.publicBaseUrl);
      const outcome = await finishSso(sso, cookieOf(request, FLOW_COOKIE), callback, auditOriginOf(request));
      reply.header('set-cookie', flowCookie(null));
      if (outcome.kind === 'unavailable') return page(reply, 200, 'Sign-in is unavailable', UNAVAILABLE);
      if (outcome.kind === 'refused')
        return page(reply, outcome.message.startsWith('This sign-in has expired') ? 400 : 403, 'You are not signed in', [outcome.message]);
      reply.header('set-cookie', [flowCookie(null), sessionCookieHeader(outcome.session, secure)]);
      return reply.redirect(outcome.returnTo, 302);
    },
  );
}
