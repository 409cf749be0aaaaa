// GET /metrics (contract section 16) in the Prometheus text format, and the hook that counts every
// HTTP answer. With METRICS_TOKEN set the scrape needs `Authorization: Bearer <METRICS_TOKEN>`;
// without it only a scrape from this host (loopback) is answered. The database's figures are read
// at most once per SNAPSHOT_SECONDS and shared by every scrape meanwhile: they count whole tables,
// and a scraper polling in a loop must not cost the store's requests (issue 36, item 9). Not in the
// OpenAPI document: it is for the monitoring system, not for API clients (docs/operations.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/db.ts';
import { bearerOf } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { safeEqual } from '../http/secrets.ts';
import type { ServiceMetrics } from './metrics.ts';
import { snapshot, type Snapshot } from './store.ts';

/** How old the database's figures of a scrape may be. */
export const SNAPSHOT_SECONDS = 15;

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

export interface MetricsRouteDeps {
  db: Queryable;
  clock: Clock;
  metrics: ServiceMetrics;
  /** METRICS_TOKEN; null: the scrape is open. */
  token: string | null;
  /** PUBLIC_BASE_URL's host name, when set. */
  publicHost: string | null;
}

/** Host names that are this host's whatever the network: a page whose name was rebound to a
 * loopback address still sends its own name, and is refused. */
const LOOPBACK_NAME = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/** The Host header's name, without its port, in lower case ('' without one). */
export function hostNameOf(host: string | undefined): string {
  const h = (host ?? '').trim().toLowerCase();
  return h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : (h.split(':')[0] ?? '');
}

/** The label of a request: its route's operationId, else its route pattern, else "unmatched" (a 404 of no route). */
export function operationOf(request: FastifyRequest): string {
  const options = request.routeOptions as { url?: string; schema?: { operationId?: string } } | undefined;
  return options?.schema?.operationId ?? options?.url ?? 'unmatched';
}

/** Counts every answer (status, latency) by operation: the label set is bounded by the routes. */
export function registerHttpMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp(operationOf(request), reply.statusCode, reply.elapsedTime / 1000);
  });
}

export async function metricsRoutes(app: FastifyInstance, deps: MetricsRouteDeps): Promise<void> {
  let last: { at: number; figures: Promise<Snapshot> } | null = null;
  const figures = (): Promise<Snapshot> => {
    const now = deps.clock.now();
    if (last === null || now.getTime() - last.at >= SNAPSHOT_SECONDS * 1000) {
      const read = snapshot(deps.db, now);
      const mine = { at: now.getTime(), figures: read };
      last = mine;
      // A failed read is not kept: the next scrape reads again.
      read.catch(() => {
        if (last === mine) last = null;
      });
    }
    return last.figures;
  };
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    // DNS rebinding (issue 36, item 11): a page of another site whose name now resolves to this
    // host reaches it with its own name in Host. Without METRICS_TOKEN only loopback names are
    // answered (and the public name, when set); with it, the public name and loopback names once
    // PUBLIC_BASE_URL is set (a token a page does not know already keeps it out).
    const name = hostNameOf(request.headers.host);
    const knownName = LOOPBACK_NAME.test(name) || (deps.publicHost !== null && name === deps.publicHost);
    if ((deps.token === null || deps.publicHost !== null) && !knownName) {
      throw new AppError(403, 'forbidden', `/metrics answers only the service's own host names (PUBLIC_BASE_URL's, and loopback), not ${name || 'none'}`);
    }
    if (deps.token !== null) {
      const given = bearerOf(request);
      if (given === null || !safeEqual(given, deps.token)) throw new AppError(401, 'unauthorized', 'the metrics token is missing or not valid');
    } else if (!LOOPBACK.test(request.ip)) {
      throw new AppError(403, 'forbidden', 'without METRICS_TOKEN, /metrics answers only this host; set METRICS_TOKEN to scrape it from another');
    }
    const text = await deps.metrics.render(await figures());
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
}
