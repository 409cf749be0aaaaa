// The console's request guards: the session cookie (its name, attributes and parsing), the session
// hook that sets the request's actor, and the CSRF check of every state-changing call: the
// session's CSRF token in the x-csrf-token header, compared in constant time, and an Origin (or
// Sec-Fetch-Site) that is this service's own.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ConsoleSessionActor } from '../access/actor.ts';
import { actorOf, header } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { isValidCsrf, resumeSession, SESSION_IDLE_SECONDS, type SessionDeps } from './sessions.ts';

export const SESSION_COOKIE = 'storeops_console';
export const CSRF_HEADER = 'x-csrf-token';
/** Sent by the console's pages on the reads they make by themselves (a live change, a poll): those
 * keep showing a session but do not keep it alive; only what a person does restarts its idle time. */
export const AUTOMATIC_HEADER = 'x-console-refresh';

/** Whether a console request is something a person did (else the page reading itself again). */
export function byPerson(request: FastifyRequest): boolean {
  return header(request, AUTOMATIC_HEADER) === undefined;
}

/** The session cookie's value in a request, if any. */
export function sessionCookie(request: FastifyRequest): string | null {
  const raw = header(request, 'cookie');
  if (raw === undefined) return null;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

/** Set-Cookie for a session (or, with null, its removal). Secure when the service is served over https. */
export function sessionCookieHeader(value: string | null, secure: boolean): string {
  const attrs = ['Path=/console', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  if (value === null) return [`${SESSION_COOKIE}=`, 'Max-Age=0', ...attrs].join('; ');
  // The browser may keep it as long as the idle limit; the service ends it sooner when idle.
  return [`${SESSION_COOKIE}=${value}`, `Max-Age=${SESSION_IDLE_SECONDS}`, ...attrs].join('; ');
}

const signedOut = () => new AppError(401, 'unauthorized', 'sign in to the console');

/**
 * Requires a live session; sets request.actor to the session's. `restarts: 'never'` for the live stream,
 * which is open as long as the page is and so says nothing of a person being there.
 */
export function sessionAuth(deps: SessionDeps, restarts: 'by-person' | 'never' = 'by-person'): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const cookie = sessionCookie(request);
    if (cookie === null) throw signedOut();
    const actor = await resumeSession(deps, cookie, restarts === 'by-person' && byPerson(request));
    if (actor === null) throw signedOut();
    request.actor = actor;
  };
}

/** The session of a request that passed sessionAuth. */
export function sessionActorOf(request: FastifyRequest): ConsoleSessionActor {
  const actor = actorOf(request);
  if (actor.kind !== 'console_session') throw new Error(`a console route was reached by a ${actor.kind}`);
  return actor;
}

/**
 * A state-changing request must come from the service's own pages: an Origin of this service
 * (PUBLIC_BASE_URL's, or the Host it was asked at) when the browser sends one, never a cross-site
 * Sec-Fetch-Site. Sign-in has no session yet, so this is its whole CSRF check.
 */
export function sameOrigin(publicBaseUrl: string): onRequestAsyncHookHandler {
  const publicOrigin = new URL(publicBaseUrl).origin;
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const site = header(request, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw forged('the request did not come from the console');
    const origin = header(request, 'origin');
    if (origin === undefined) return;
    const host = header(request, 'host');
    const asked = host === undefined ? null : `${request.protocol}://${host}`;
    if (origin !== publicOrigin && origin !== asked) throw forged('the request did not come from the console');
  };
}

const forged = (message: string) => new AppError(403, 'csrf_failed', message);

/** After sessionAuth: the session's CSRF token in the x-csrf-token header. */
export function csrfCheck(): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const cookie = sessionCookie(request) ?? '';
    if (!isValidCsrf(cookie, header(request, CSRF_HEADER))) throw forged('the CSRF token is missing or not valid');
  };
}
