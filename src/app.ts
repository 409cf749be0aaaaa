// The HTTP application: plugins, error handling, the cross-cutting routes (home, health, /mqtt,
// /metrics) and each feature module's routes. compose.ts builds the modules and everything else.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { DeviceGateway } from './devices/gateway.ts';
import { deviceRoutes } from './devices/routes.ts';
import type { FeatureModule } from './feature-module.ts';
import { frameworkErrors, registerErrorHandling } from './http/errors.ts';
import { openApiOptions } from './http/openapi.ts';
import { validatorCompiler } from './http/validation.ts';
import { healthRoutes } from './http/health.ts';
import { homeRoutes } from './http/home.ts';
import { clientErrorHandler, closeAfterEarlyAnswers } from './http/client-errors.ts';
import { registerFailureLimit, type FailureLimit } from './http/rate-limit.ts';
import type { ServiceMetrics } from './metrics/metrics.ts';
import { metricsRoutes, registerHttpMetrics } from './metrics/routes.ts';

/** What the HTTP app is built from: the cross-cutting parts, and each feature's module. */
export interface AppDeps {
  config: Config;
  db: Db;
  clock: Clock;
  /** Made first (logger.ts): every request logs through it. */
  logger: FastifyBaseLogger;
  /** The device channel (MQTT): WebSocket upgrades at /mqtt, the broker auth endpoints, health. */
  devices: DeviceGateway;
  /** Brute-force guard; the default unless a test needs another. */
  failureLimit?: FailureLimit;
  /** The service's Prometheus metrics (GET /metrics, HTTP answers). */
  metrics: ServiceMetrics;
  /** The features, whose routes are registered in this order. */
  modules: readonly FeatureModule[];
}

export type App = FastifyInstance;

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { allErrors: true } },
    return503OnClosing: true,
    frameworkErrors,
    trustProxy: deps.config.trustProxy,
    forceCloseConnections: 'idle',
    // A client trickling its request (a form body to R2 is read before its signature is checked)
    // holds a socket; past the timeout it gets 408 and the socket is closed.
    requestTimeout: deps.config.requestTimeoutSeconds * 1000,
    // Fastify sets the server's requestTimeout from the option above after creating it; these two
    // are the server's own: Node checks the request timeout only when the headers timeout is not
    // longer than it, and checks both every connectionsCheckingInterval.
    http: {
      headersTimeout: Math.min(60_000, deps.config.requestTimeoutSeconds * 1000),
      connectionsCheckingInterval: Math.min(30_000, deps.config.requestTimeoutSeconds * 500),
    },
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  app.decorateRequest('actor', null);
  app.decorateRequest('locker', null);
  registerErrorHandling(app);
  closeAfterEarlyAnswers(app);
  registerFailureLimit(app, deps.clock, deps.failureLimit, { trustProxy: deps.config.trustProxy });
  registerHttpMetrics(app, deps.metrics);

  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(swagger, openApiOptions());
  // The reference's pages carry a Content-Security-Policy (issue 36, item 11): its own scripts and
  // styles only (inline ones by hash), nothing from elsewhere, never in a frame. The plugin's policy
  // also allows any https: font or style, the public validator's images and upgrade-insecure-requests
  // (which breaks a store box served over plain http): those are taken out.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null },
    staticCSP: true,
    transformStaticCSP: (header) =>
      header
        .replace(/ https:/g, '')
        .replace(' validator.swagger.io', '')
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/ ?upgrade-insecure-requests;/, '')
        .concat(" form-action 'self';"),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(homeRoutes);
  await app.register(healthRoutes, { db: deps.db, devices: deps.devices });
  await app.register(deviceRoutes, { mqttAuthSecret: deps.config.mqttAuthSecret, devices: deps.devices });
  await app.register(metricsRoutes, {
    db: deps.db,
    clock: deps.clock,
    metrics: deps.metrics,
    token: deps.config.metricsToken,
    publicHost: deps.config.publicHost,
  });
  for (const module of deps.modules) await module.routes?.(app);

  return app;
}
