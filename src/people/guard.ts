// The request guards of a person's session: the session hook that sets the request's actor, and the
// CSRF check of every state-changing call made with a session (the console, the staff app, section
// 18): the session's CSRF token in the x-csrf-token header, compared in constant time, and an
// Origin (or Sec-Fetch-Site) that is this service's own.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { PersonActor } from '../access/actor.ts';
import { actorOf, header } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { cookieOf, SESSION_COOKIE } from './cookies.ts';
import { isValidCsrf, resumeSession, type SessionDeps } from './sessions.ts';

export const CSRF_HEADER = 'x-csrf-token';
/** Sent by pages on the reads they make by themselves (a live change, a poll): those keep showing a
 * session but do not keep it alive; only what a person does restarts its idle time. */
export const AUTOMATIC_HEADER = 'x-console-refresh';

/** Every answer of the plugin's routes is `cache-control: no-store`: what is answered to a session or
 * an administrator is never kept by a cache between the browser and the service. */
export function answersUncached(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('cache-control', 'no-store');
    return payload;
  });
}

/** Whether a request is something a person did (else a page reading itself again). */
export function byPerson(request: FastifyRequest): boolean {
  return header(request, AUTOMATIC_HEADER) === undefined;
}

export const sessionValueOf = (request: FastifyRequest): string | null => cookieOf(request, SESSION_COOKIE);

const signedOut = () => new AppError(401, 'unauthorized', 'sign in first');
export const passwordChangeRequired = () => new AppError(403, 'password_change_required', 'change your one-time password first');

export interface PersonAuthOptions {
  /** 'never' for a live stream, which is open as long as its page is and says nothing of a person being there. */
  restarts?: 'by-person' | 'never';
  /** Whether a session that must change its password may use the route (changing it, signing out). */
  beforePasswordChange?: boolean;
}

/** Requires a live session; sets request.actor to its person. */
export function personAuth(deps: SessionDeps, opts: PersonAuthOptions = {}): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const value = sessionValueOf(request);
    if (value === null) throw signedOut();
    const person = await resumeSession(deps, value, (opts.restarts ?? 'by-person') === 'by-person' && byPerson(request));
    if (person === null) throw signedOut();
    if (person.mustChangePassword && opts.beforePasswordChange !== true) throw passwordChangeRequired();
    request.actor = person;
  };
}

/** The person of a request that passed personAuth. */
export function personOf(request: FastifyRequest): PersonActor {
  const actor = actorOf(request);
  if (actor.kind !== 'person') throw new Error(`a session route was reached by a ${actor.kind}`);
  return actor;
}

const forged = (message: string) => new AppError(403, 'csrf_failed', message);

/**
 * A state-changing request must come from the service's own pages: an Origin of this service
 * (PUBLIC_BASE_URL's, or the Host it was asked at) when the browser sends one, never a cross-site
 * Sec-Fetch-Site. Sign-in has no session yet, so this is its whole CSRF check.
 */
export function sameOrigin(publicBaseUrl: string): onRequestAsyncHookHandler {
  const publicOrigin = new URL(publicBaseUrl).origin;
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const site = header(request, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw forged('the request did not come from this service');
    const origin = header(request, 'origin');
    if (origin === undefined) return;
    const host = header(request, 'host');
    const asked = host === undefined ? null : `${request.protocol}://${host}`;
    if (origin !== publicOrigin && origin !== asked) throw forged('the request did not come from this service');
  };
}

/** After personAuth: the session's CSRF token in the x-csrf-token header. */
export function csrfCheck(): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    if (!isValidCsrf(sessionValueOf(request) ?? '', header(request, CSRF_HEADER))) throw forged('the CSRF token is missing or not valid');
  };
}

/** The hooks of a state-changing call made with a session: same origin, a live session, its CSRF token. */
export function changingWithSession(deps: SessionDeps & { publicBaseUrl: string }, opts: PersonAuthOptions = {}): onRequestAsyncHookHandler[] {
  return [sameOrigin(deps.publicBaseUrl), personAuth(deps, opts), csrfCheck()];
}
