// GET /metrics (contract section 16) in the Prometheus text format, and the hook that counts every
// HTTP answer. With METRICS_TOKEN set the scrape needs `Authorization: Bearer <METRICS_TOKEN>`;
// without it /metrics is open (keep it off the public network then). Not in the OpenAPI document:
// it is for the monitoring system, not for API clients (docs/operations.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/db.ts';
import { bearerOf } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { safeEqual } from '../http/secrets.ts';
import type { ServiceMetrics } from './metrics.ts';
import { snapshot } from './store.ts';

export interface MetricsRouteDeps {
  db: Queryable;
  clock: Clock;
  metrics: ServiceMetrics;
  /** METRICS_TOKEN; null: the scrape is open. */
  token: string | null;
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
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (deps.token !== null) {
      const given = bearerOf(request);
      if (given === null || !safeEqual(given, deps.token)) throw new AppError(401, 'unauthorized', 'the metrics token is missing or not valid');
    }
    const text = await deps.metrics.render(await snapshot(deps.db, deps.clock.now()));
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
}
