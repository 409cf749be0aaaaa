// The customer access of C4, C5 and C6: without an Authorization header the request is a
// customer's, and the message_id it names is the credential.
import type { onRequestAsyncHookHandler } from 'fastify';
import { customerActor } from '../access/actor.ts';
import { bearerAuth, header, type ApiTokens } from '../http/auth.ts';

/**
 * C4, C5, C6: without an Authorization header the actor is a customer holding a message_id; with
 * one, the token rules of the cfh scope apply as for every other operation.
 */
export function customerOrBearer(tokens: ApiTokens, scope: string): onRequestAsyncHookHandler {
  const bearer = bearerAuth(tokens, scope);
  return async function (this: unknown, request, reply) {
    if (header(request, 'authorization') === undefined) {
      request.actor = customerActor('message_id');
      return;
    }
    await bearer.call(this as never, request, reply);
  };
}
