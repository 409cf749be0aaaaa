// The contract's credentials as reusable route hooks: the shared secret_token (L1-L6), a locker's
// api-key header (L7) and bearer tokens with scopes (C0-C5, R1).
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { AppError } from './errors.ts';
import { matchesDigest, sha256hex } from './secrets.ts';

export interface Principal {
  tokenId: number;
  organizationId: number;
  scopes: readonly string[];
}

export interface LockerIdentity {
  id: number;
  organizationId: number;
  locationId: number;
  version: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    locker: LockerIdentity | null;
  }
}

const unauthorized = (message: string) => new AppError(401, 'unauthorized', message);

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** L1-L6: the shared secret in the secret_token query parameter. */
export function secretTokenAuth(secretDigest: string): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.secret_token;
    if (typeof token !== 'string' || token === '') throw unauthorized('secret_token is required');
    if (!matchesDigest(token, secretDigest)) throw unauthorized('secret_token is not valid');
  };
}

export async function findLockerByKey(q: Queryable, apiKey: string): Promise<LockerIdentity | null> {
  const [row] = await q.query<{ id: number; organization_id: number; location_id: number; version: number; api_key_hash: string }>(
    'SELECT id, organization_id, location_id, version, api_key_hash FROM lockers WHERE api_key_hash = $1',
    [sha256hex(apiKey)],
  );
  if (row === undefined || !matchesDigest(apiKey, row.api_key_hash)) return null;
  return { id: row.id, organizationId: row.organization_id, locationId: row.location_id, version: row.version };
}

/** L7: the locker's own api_key in the api-key header; sets request.locker. */
export function lockerKeyAuth(db: Db): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const key = header(request, 'api-key');
    if (key === undefined || key === '') throw unauthorized('the api-key header is required');
    const locker = await findLockerByKey(db, key);
    if (locker === null) throw unauthorized('the api-key is not valid');
    request.locker = locker;
  };
}

export function bearerOf(request: FastifyRequest): string | null {
  const value = header(request, 'authorization');
  const m = value === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  return m?.[1] ?? null;
}

/** The live (not revoked, not expired) API token with this value, if any. */
export async function findPrincipal(q: Queryable, clock: Clock, token: string): Promise<Principal | null> {
  const [row] = await q.query<{ id: number; organization_id: number; scopes: string[]; token_hash: string }>(
    `SELECT id, organization_id, scopes, token_hash FROM api_tokens
     WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
    [sha256hex(token), clock.now()],
  );
  if (row === undefined || !matchesDigest(token, row.token_hash)) return null;
  return { tokenId: row.id, organizationId: row.organization_id, scopes: row.scopes };
}

/**
 * Bearer token with a scope; sets request.principal. Missing or invalid: 401 (C0-C5), or the
 * given status where the contract says otherwise (R1 answers 403 to every refused credential).
 */
export function bearerAuth(db: Db, clock: Clock, scope: string, opts: { failStatus?: 401 | 403 } = {}): onRequestAsyncHookHandler {
  const failStatus = opts.failStatus ?? 401;
  const refuse = (message: string) =>
    failStatus === 401 ? unauthorized(message) : new AppError(403, 'forbidden', message);
  return async (request: FastifyRequest) => {
    const token = bearerOf(request);
    if (token === null) throw refuse('a bearer token is required');
    const principal = await findPrincipal(db, clock, token);
    if (principal === null) throw refuse('the bearer token is not valid');
    if (!principal.scopes.includes(scope)) throw new AppError(403, 'insufficient_scope', `the token lacks the "${scope}" scope`);
    request.principal = principal;
  };
}
