// The contract's credentials as reusable route hooks: the shared secret_token (L1-L6), a locker's
// api-key header (L7) and bearer tokens with scopes (C0-C5, R1).
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Actor, ApiTokenActor } from '../access/actor.ts';
import type { Db, Queryable } from '../db/db.ts';
import { AppError } from './errors.ts';
import { matchesDigest, sha256hex } from './secrets.ts';

export interface LockerIdentity {
  id: number;
  organizationId: number;
  locationId: number;
  version: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is acting, once the route's credential hook has found it. */
    actor: Actor | null;
    locker: LockerIdentity | null;
  }
}

const unauthorized = (message: string) => new AppError(401, 'unauthorized', message);

/** A request header's value (the first, when sent more than once). */
export function header(request: FastifyRequest, name: string): string | undefined {
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

/** The locker whose api_key this is, if any (devices/credentials.ts `lockerByKey` checks it). */
export type LockerKeyLookup = (apiKey: string) => Promise<LockerIdentity | null>;

/** L7: the locker's own api_key in the api-key header; sets request.locker. */
export function lockerKeyAuth(findLocker: LockerKeyLookup): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const key = header(request, 'api-key');
    if (key === undefined || key === '') throw unauthorized('the api-key header is required');
    const locker = await findLocker(key);
    if (locker === null) throw unauthorized('the api-key is not valid');
    request.locker = locker;
  };
}

export function bearerOf(request: FastifyRequest): string | null {
  const value = header(request, 'authorization');
  const m = value === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  return m?.[1] ?? null;
}

/** How long a token found live is taken as live without asking the database again. */
const TOKEN_CACHE_MS = 1_000;
/** Past this many cached tokens the cache starts over (it holds digests, never tokens). */
const TOKEN_CACHE_MAX = 10_000;

/** Finds the live (not revoked, not expired) API token with a value. */
export interface ApiTokens {
  find(token: string): Promise<ApiTokenActor | null>;
}

/**
 * API tokens looked up by their SHA-256, with a one-second memory of the live ones: a customer
 * page polling C5, or a chat integration, sends the same token many times a second, and the
 * lookup was half of C5's database work. A revocation's commit empties the memory of every
 * instance (NOTIFY), and a second is the most a memory lives if that word were lost; an expiring
 * token is refused exactly at its expiry. Unknown tokens are never cached.
 */
export function apiTokenLookup(db: Queryable & Pick<Db, 'commits'>, clock: Clock): ApiTokens {
  const live = new Map<string, { actor: ApiTokenActor; until: number }>();
  // A token revoked or changed anywhere (its commit signals `credentials`) is forgotten here at
  // once: the next request asks the database again.
  db.commits.on('credentials', () => live.clear());
  return {
    async find(token: string): Promise<ApiTokenActor | null> {
      const digest = sha256hex(token);
      const now = clock.now();
      const cached = live.get(digest);
      if (cached !== undefined && now.getTime() < cached.until) return cached.actor;
      live.delete(digest);
      const [row] = await db.query<{
        id: number;
        organization_id: number;
        scopes: string[];
        location_ids: number[] | null;
        token_hash: string;
        expires_at: string | null;
        service_account_id: number;
        service_account_name: string;
      }>(
        // last_used_at moves at most once a minute: a token used many times a second writes little.
        `WITH found AS (
           SELECT t.id, t.organization_id, t.scopes, t.location_ids, t.token_hash, t.expires_at, t.last_used_at,
             s.id AS service_account_id, s.name AS service_account_name
           FROM api_tokens t JOIN service_accounts s ON s.id = t.service_account_id
           WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)
         ), used AS (
           UPDATE api_tokens t SET last_used_at = $2 FROM found
           WHERE t.id = found.id AND (found.last_used_at IS NULL OR found.last_used_at < $2::timestamptz - interval '1 minute')
         )
         SELECT * FROM found`,
        [digest, now],
      );
      if (row === undefined || !matchesDigest(token, row.token_hash)) return null;
      const actor: ApiTokenActor = {
        kind: 'api_token',
        tokenId: row.id,
        serviceAccountId: row.service_account_id,
        serviceAccountName: row.service_account_name,
        reach: { organizationId: row.organization_id, locationIds: row.location_ids, scopes: row.scopes },
      };
      if (live.size >= TOKEN_CACHE_MAX) live.clear();
      const expiry = row.expires_at === null ? Infinity : Date.parse(row.expires_at);
      live.set(digest, { actor, until: Math.min(now.getTime() + TOKEN_CACHE_MS, expiry) });
      return actor;
    },
  };
}

/**
 * Bearer token with a scope; sets request.actor. Missing or invalid: 401 (C0-C5), or the
 * given status where the contract says otherwise (R1 answers 403 to every refused credential).
 */
export function bearerAuth(tokens: ApiTokens, scope: string, opts: { failStatus?: 401 | 403 } = {}): onRequestAsyncHookHandler {
  const failStatus = opts.failStatus ?? 401;
  const refuse = (message: string) => (failStatus === 401 ? unauthorized(message) : new AppError(403, 'forbidden', message));
  return async (request: FastifyRequest) => {
    const token = bearerOf(request);
    if (token === null) throw refuse('a bearer token is required');
    const actor = await tokens.find(token);
    if (actor === null) throw refuse('the bearer token is not valid');
    if (!actor.reach.scopes.includes(scope)) throw new AppError(403, 'insufficient_scope', `the token lacks the "${scope}" scope`);
    request.actor = actor;
  };
}

/** The actor of a request that passed its route's credential hook (which refuses it otherwise). */
export function actorOf(request: FastifyRequest): Actor {
  if (request.actor === null) throw new Error('the route has no credential hook that finds its actor');
  return request.actor;
}

/** The token of a request that passed its route's bearerAuth hook. */
export function tokenActorOf(request: FastifyRequest): ApiTokenActor {
  const actor = actorOf(request);
  if (actor.kind !== 'api_token') throw new Error(`a bearer route was reached by a ${actor.kind}`);
  return actor;
}
