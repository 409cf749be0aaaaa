// Brute-force guard: a client whose requests keep failing their credential (401, 403) or naming
// things that do not exist (404 from a known route: open codes, message ids) is refused with 429
// for the rest of the window. Only failures are counted, so a well-behaved client pays nothing.
// Counts live in each instance's memory: N instances allow N times the budget, still far below
// what guessing a 128-bit open code or token would need.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import { AppError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's 403 answers a question about someone else (a broker asking whether a device
     * may do something), so it is no failed credential of the caller and is not counted. */
    refusalIsAnswer?: boolean;
  }
}

export interface FailureLimit {
  /** failures allowed per client in one window */
  max: number;
  windowMs: number;
}

export const DEFAULT_FAILURE_LIMIT: FailureLimit = Object.freeze({ max: 30, windowMs: 60_000 });
const MAX_TRACKED_CLIENTS = 100_000;

interface Bucket {
  start: number;
  failures: number;
}

export function registerFailureLimit(app: FastifyInstance, clock: Clock, limit: FailureLimit = DEFAULT_FAILURE_LIMIT): void {
  const buckets = new Map<string, Bucket>();

  const current = (key: string, now: number): Bucket | undefined => {
    const bucket = buckets.get(key);
    if (bucket !== undefined && now - bucket.start >= limit.windowMs) {
      buckets.delete(key);
      return undefined;
    }
    return bucket;
  };

  app.addHook('onRequest', async (request) => {
    const now = clock.now().getTime();
    const bucket = current(request.ip, now);
    if (bucket !== undefined && bucket.failures >= limit.max) {
      const retryAfter = Math.max(1, Math.ceil((bucket.start + limit.windowMs - now) / 1000));
      throw new AppError(429, 'too_many_failures', `too many failed requests; retry after ${retryAfter} s`, { headers: { 'retry-after': String(retryAfter) } });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const guessed = status === 401 || status === 403 || (status === 404 && request.routeOptions.url !== undefined);
    if (!guessed) return;
    if (status === 403 && request.routeOptions.config.refusalIsAnswer === true) return;
    const now = clock.now().getTime();
    let bucket = current(request.ip, now);
    if (bucket === undefined) {
      if (buckets.size >= MAX_TRACKED_CLIENTS) sweep(now);
      bucket = { start: now, failures: 0 };
      buckets.set(request.ip, bucket);
    }
    bucket.failures++;
  });

  function sweep(now: number): void {
    for (const [key, bucket] of buckets) if (now - bucket.start >= limit.windowMs) buckets.delete(key);
    // Still full of live clients: forget the oldest rather than grow without bound.
    for (const key of buckets.keys()) {
      if (buckets.size < MAX_TRACKED_CLIENTS) break;
      buckets.delete(key);
    }
  }
}
