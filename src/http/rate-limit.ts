// Brute-force guard. What it counts is failed credentials only: a 401 or 403, and a 404 on a route
// where the identifier in the URL is itself the credential (a customer's message_id, a display
// key) when nothing else was presented. Once a client has failed too often with one kind of
// credential, its next failures of that kind are answered 429 with Retry-After instead; a request
// whose credential is valid is never refused, whatever other requests from its address did (stores
// put many devices behind one address), and a request that presents no credential where none is
// needed (health probes, pages) is never touched.
//
// Clients are told apart by address and by the kind of credential they present (bearer token,
// api-key, secret_token, signature, capability), so a device guessing keys does not make a chat
// integration's bad token look worse. A client that rotates its apparent address (a forged
// X-Forwarded-For with TRUST_PROXY too trusting) is stopped by a budget per kind over all
// addresses, which again refuses only failing requests.
//
// Counts live in each instance's memory: N instances allow N times the budget, still far below
// what guessing a 128-bit key or token would need.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { errorBody } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's 403 answers a question about someone else (a broker asking whether a device
     * may do something), so it is no failed credential of the caller and is not counted. */
    refusalIsAnswer?: boolean;
    /** The identifier in this route's URL is the credential (contract section 2, capabilities): a
     * 404 to a request that presents no other credential is a failed guess. */
    capabilityRoute?: boolean;
  }
}

export interface FailureLimit {
  /** failures allowed per client (address and kind of credential) in one window */
  max: number;
  windowMs: number;
  /** failures allowed per kind of credential over all addresses in one window; default 50 × max */
  maxPerKind?: number;
}

export const DEFAULT_FAILURE_LIMIT: FailureLimit = Object.freeze({ max: 30, windowMs: 60_000 });
const MAX_TRACKED_CLIENTS = 100_000;

interface Bucket {
  start: number;
  failures: number;
}

/** The kind of credential a request presents (what a guesser would be guessing). */
export function credentialKind(request: FastifyRequest): string {
  const h = request.headers;
  if (h.authorization !== undefined) return 'authorization';
  if (h['api-key'] !== undefined) return 'api-key';
  if (h['x-messaging-signature'] !== undefined || h['x-twilio-signature'] !== undefined) return 'signature';
  if (/[?&]secret_token=/.test(request.url)) return 'secret_token';
  if (request.headers.cookie !== undefined && request.url.startsWith('/console')) return 'session';
  return 'none';
}

export interface FailureLimitOptions {
  /** Whether X-Forwarded-For is believed; unset while forwarded requests arrive, a warning says so. */
  trustProxy?: boolean | string;
}

export function registerFailureLimit(app: FastifyInstance, clock: Clock, limit: FailureLimit = DEFAULT_FAILURE_LIMIT, opts: FailureLimitOptions = {}): void {
  const buckets = new Map<string, Bucket>();
  const perKind = new Map<string, Bucket>();
  const maxPerKind = limit.maxPerKind ?? limit.max * 50;
  let warnedProxy = opts.trustProxy !== false && opts.trustProxy !== undefined;

  const live = (map: Map<string, Bucket>, key: string, now: number): Bucket => {
    let bucket = map.get(key);
    if (bucket !== undefined && now - bucket.start >= limit.windowMs) bucket = undefined;
    if (bucket === undefined) {
      if (map.size >= MAX_TRACKED_CLIENTS) sweep(map, now);
      bucket = { start: now, failures: 0 };
      map.set(key, bucket);
    }
    return bucket;
  };

  app.addHook('onRequest', async (request) => {
    if (warnedProxy || request.headers['x-forwarded-for'] === undefined) return;
    warnedProxy = true;
    request.log.warn(
      "requests arrive with X-Forwarded-For but TRUST_PROXY is unset: every client behind the proxy shares its address; set TRUST_PROXY to the proxy's address",
    );
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const kind = failedCredential(request, reply.statusCode);
    if (kind === null) return payload;
    const now = clock.now().getTime();
    const client = live(buckets, `${request.ip} ${kind}`, now);
    const all = live(perKind, kind, now);
    client.failures++;
    all.failures++;
    const over = client.failures > limit.max ? client : all.failures > maxPerKind ? all : null;
    if (over === null) return payload;
    const retryAfter = Math.max(1, Math.ceil((over.start + limit.windowMs - now) / 1000));
    const message = `too many failed credentials; retry after ${retryAfter} s`;
    void reply.code(429).header('retry-after', String(retryAfter)).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(errorBody(request, { message, code: 'too_many_failures' }));
  });

  function failedCredential(request: FastifyRequest, status: number): string | null {
    const config = request.routeOptions.config;
    if (status === 401 || status === 403) {
      if (status === 403 && config.refusalIsAnswer === true) return null;
      return credentialKind(request);
    }
    if (status === 404 && config.capabilityRoute === true) {
      const kind = credentialKind(request);
      return kind === 'none' ? 'capability' : null;
    }
    return null;
  }

  function sweep(map: Map<string, Bucket>, now: number): void {
    for (const [key, bucket] of map) if (now - bucket.start >= limit.windowMs) map.delete(key);
    // Still full of live clients: forget the oldest rather than grow without bound.
    for (const key of map.keys()) {
      if (map.size < MAX_TRACKED_CLIENTS) break;
      map.delete(key);
    }
  }
}
