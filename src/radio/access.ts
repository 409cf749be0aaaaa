// Credentials of the radio operations (contract section 2). Every refusal is 403 (the seed
// documents 403 and 404 only), and nothing here depends on whether the edge id asked for exists,
// so a caller without a valid credential never learns which edge devices exist.
import type { FastifyRequest } from 'fastify';
import type { Db } from '../db/db.ts';
import { bearerOf, type ApiTokens } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import type { RadioCaller } from './rules.ts';
import { findEdgeByKey, findMessagingAccount, type MessagingAccount } from './store.ts';
import { isValidMessagingSignature, type FormFields } from './signature.ts';

const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message);

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * R1 and the transcripts: the edge device's own key in `api-key`, or a bearer token with the
 * `radio` scope. When an `api-key` header is sent it decides alone (no fallback to the token).
 */
export async function radioCaller(db: Db, tokens: ApiTokens, request: FastifyRequest): Promise<RadioCaller> {
  const apiKey = header(request, 'api-key');
  if (apiKey !== undefined && apiKey !== '') {
    const edge = await findEdgeByKey(db, apiKey);
    if (edge === null) throw forbidden('the api-key is not valid');
    return { kind: 'edge', edge };
  }
  const token = bearerOf(request);
  if (token === null) throw forbidden("an edge device's api-key or a bearer token is required");
  const principal = await tokens.find(token);
  if (principal === null) throw forbidden('the bearer token is not valid');
  if (!principal.scopes.includes('radio')) throw forbidden('the token lacks the "radio" scope', 'insufficient_scope');
  return { kind: 'token', principal };
}

/**
 * R2: the provider's signature over PUBLIC_BASE_URL + the request's path and query + the form
 * fields, keyed with the auth token of the account named by AccountSid. Returns that account.
 */
export async function signedMessagingAccount(db: Db, publicBaseUrl: string, request: FastifyRequest, fields: FormFields, accountSid: string): Promise<MessagingAccount> {
  const signature = header(request, 'x-messaging-signature') ?? header(request, 'x-twilio-signature');
  if (signature === undefined || signature === '') throw forbidden('the X-Messaging-Signature header is required');
  const account = await findMessagingAccount(db, accountSid);
  if (account === null) throw forbidden('the request signature is not valid');
  // request.url is the path and query exactly as sent, which is what the provider signed.
  if (!isValidMessagingSignature(account.authToken, publicBaseUrl + request.url, fields, signature)) {
    throw forbidden('the request signature is not valid');
  }
  return account;
}
