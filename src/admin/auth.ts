// Who may call section 18's operations (/api/admin/...): a person's session (its CSRF token and this
// service's origin on every change) or a bearer token with the `admin` scope. Either way the
// request's actor is set, and each operation then decides with mayDo(actor, 'administer', place):
// a place out of reach is 404, a visible one the role may not change 403.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { narrowedTo, type Actor, type OrganizationActor } from '../access/actor.ts';
import { bearerAuth, actorOf, type ApiTokens } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { csrfCheck, personAuth, sameOrigin, sessionValueOf } from '../people/guard.ts';
import type { SessionDeps } from '../people/sessions.ts';

export interface AdminAuthDeps extends SessionDeps {
  apiTokens: ApiTokens;
  publicBaseUrl: string;
}

const READS = new Set(['GET', 'HEAD']);

/** The hook of a section 18 operation: a session (with CSRF on changes) or an admin token. */
export function adminAuth(deps: AdminAuthDeps): onRequestAsyncHookHandler {
  const person = personAuth(deps);
  const origin = sameOrigin(deps.publicBaseUrl);
  const csrf = csrfCheck();
  const token = bearerAuth(deps.apiTokens, 'admin');
  return async function (this: unknown, request, reply) {
    if (sessionValueOf(request) === null) return token.call(this as never, request, reply);
    if (!READS.has(request.method)) await origin.call(this as never, request, reply);
    await person.call(this as never, request, reply);
    if (!READS.has(request.method)) await csrf.call(this as never, request, reply);
  };
}

/**
 * The actor of an administration request; 403 for a person who administers nothing. Operations on
 * one object ask mayDo(actor, 'administer', place) (403 for a visible place it may not change);
 * lists read with administeredBy(actor), which finds only what it may administer.
 */
export function administratorOf(request: FastifyRequest): OrganizationActor {
  const actor: Actor = actorOf(request);
  if (actor.kind === 'person') {
    if (narrowedTo(actor, 'administer') === null) throw new AppError(403, 'forbidden', 'administration is for organization and location admins');
    return actor;
  }
  if (actor.kind !== 'api_token') throw new Error(`an administration route was reached by a ${actor.kind}`);
  return actor;
}

/** The actor as far as administering goes: a person keeps only the memberships that administer, so
 * a read by its reach finds exactly what it may administer. */
export function administeredBy(actor: OrganizationActor): OrganizationActor {
  return actor.kind === 'person' ? (narrowedTo(actor, 'administer') ?? { ...actor, memberships: [], reach: { ...actor.reach, locationIds: [] } }) : actor;
}
