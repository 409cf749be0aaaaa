// Who is calling Call for Help: a bearer token's principal as a use-case Caller, and the customer
// access of C4, C5 and C6 (no Authorization header: the message_id is the credential).
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { bearerAuth, header, type ApiTokens, type Principal } from '../http/auth.ts';
import { CUSTOMER, type Caller } from './requests.ts';

/** The caller a token makes: its organization, its locations (when the token is limited to some). */
export function callerOf(principal: Principal): Caller {
  return { organizationId: principal.organizationId, tokenId: principal.tokenId, locationIds: principal.locationIds };
}

/**
 * C4, C5, C6: without an Authorization header the request is a customer's (principal stays null);
 * with one, the token rules of the cfh scope apply as for every other operation.
 */
export function customerOrBearer(tokens: ApiTokens, scope: string): onRequestAsyncHookHandler {
  const bearer = bearerAuth(tokens, scope);
  return async function (this: unknown, request, reply) {
    if (header(request, 'authorization') === undefined) return;
    await bearer.call(this as never, request, reply);
  };
}

/** The caller of a route behind customerOrBearer. */
export function customerOrCaller(request: FastifyRequest): Caller {
  return request.principal === null ? CUSTOMER : callerOf(request.principal);
}
