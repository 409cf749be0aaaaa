// Credentials of the radio operations (contract section 2). Every refusal is 403 (the seed
// documents 403 and 404 only), and nothing here depends on whether the edge id asked for exists,
// so a caller without a valid credential never learns which edge devices exist.
import type { FastifyRequest } from 'fastify';
import { deviceActor, type Actor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { edgeByKey } from '../devices/credentials.ts';
import { bearerOf, header, type ApiTokens } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { authorizeEdgeUse } from './rules.ts';
import { findEdge, findMessagingAccount, type Edge, type MessagingAccount } from './store.ts';
import { isValidMessagingSignature, type FormFields } from './signature.ts';

const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message);

/**
 * R1 and the transcripts: the edge device's own key in `api-key`, or a bearer token with the
 * `radio` scope. When an `api-key` header is sent it decides alone (no fallback to the token).
 */
export async function radioActor(db: Queryable, tokens: ApiTokens, request: FastifyRequest): Promise<Actor> {
  const apiKey = header(request, 'api-key');
  if (apiKey !== undefined && apiKey !== '') {
    const edge = await edgeByKey(db, apiKey);
    if (edge === null) throw forbidden('the api-key is not valid');
    return deviceActor('edge_device', edge.edgeId, edge);
  }
  const token = bearerOf(request);
  if (token === null) throw forbidden("an edge device's api-key or a bearer token is required");
  const actor = await tokens.find(token);
  if (actor === null) throw forbidden('the bearer token is not valid');
  if (!actor.reach.scopes.includes('radio')) throw forbidden('the token lacks the "radio" scope', 'insufficient_scope');
  return actor;
}

/** The edge device `edgeId` if the actor may use it. `missing`: what a token is told of an edge
 * device it may not use (authorizeEdgeUse). `retired`: a disabled edge device is found too (its
 * transcripts stay readable; it plays nothing). */
export async function edgeForActor(db: Queryable, actor: Actor, edgeId: string, missing?: () => AppError, opts: { retired?: boolean } = {}): Promise<Edge> {
  return authorizeEdgeUse(actor, edgeId, await findEdge(db, edgeId, opts), missing);
}

/** What the messaging provider signed: the public URL of the request, its form fields, and the signature sent. */
export interface SignedForm {
  /** PUBLIC_BASE_URL + the request's path and query exactly as sent. */
  url: string;
  fields: FormFields;
  signature: string | undefined;
}

/** The X-Messaging-Signature header, or the provider's own name for it. */
export function messagingSignatureOf(request: FastifyRequest): string | undefined {
  return header(request, 'x-messaging-signature') ?? header(request, 'x-twilio-signature');
}

/**
 * R2: the provider's signature over the public URL and the form fields, keyed with the auth token
 * of the account named by AccountSid. Returns that account.
 */
export async function signedMessagingAccount(db: Queryable, form: SignedForm, accountSid: string): Promise<MessagingAccount> {
  if (form.signature === undefined || form.signature === '') throw forbidden('the X-Messaging-Signature header is required');
  const account = await findMessagingAccount(db, accountSid);
  if (account === null) throw forbidden('the request signature is not valid');
  if (!isValidMessagingSignature(account.authToken, form.url, form.fields, form.signature)) {
    throw forbidden('the request signature is not valid');
  }
  return account;
}
