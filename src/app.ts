// The HTTP application: plugins, error handling, and each feature's routes given the narrow
// dependencies it declares. compose.ts builds it with everything else the service runs.
import Fastify, { type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { DeviceGateway } from './devices/gateway.ts';
import { deviceRoutes } from './devices/routes.ts';
import { frameworkErrors, registerErrorHandling } from './http/errors.ts';
import { openApiOptions } from './http/openapi.ts';
import { validatorCompiler } from './http/validation.ts';
import { redactUrl } from './http/secrets.ts';
import { healthRoutes } from './http/health.ts';
import { homeRoutes } from './http/home.ts';
import { clientErrorHandler, closeAfterEarlyAnswers } from './http/client-errors.ts';
import { registerFailureLimit, type FailureLimit } from './http/rate-limit.ts';
import { apiTokenLookup, type ApiTokens } from './http/auth.ts';
import { lockerRoutes } from './lockers/routes.ts';
import { deviceHealthRoutes } from './devices/health-routes.ts';
import { cfhRoutes } from './cfh/routes.ts';
import { buttonDisplayListRoutes } from './cfh/button-routes.ts';
import { cfhStreamRoutes } from './cfh/stream-routes.ts';
import { cfhPageRoutes } from './cfh/page-routes.ts';
import { radioRoutes } from './radio/routes.ts';
import type { SpeechSynthesizer } from './radio/speech/speech.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { reportRoutes } from './reports/routes.ts';
import type { ServiceMetrics } from './metrics/metrics.ts';
import type { LiveStreams } from './live/streams.ts';
import { metricsRoutes, registerHttpMetrics } from './metrics/routes.ts';
import { consoleRoutes } from './console/routes.ts';

/** What the HTTP app is built from; each feature's routes take their own part of it. */
export interface AppDeps {
  config: Config;
  db: Db;
  clock: Clock;
  /** The device channel (MQTT): WebSocket upgrades at /mqtt, the broker auth endpoints, health. */
  devices: DeviceGateway;
  /** SHA-256 of the shared secret_token of L1-L6. */
  secretDigest: string;
  /** Brute-force guard; the default unless a test needs another. */
  failureLimit?: FailureLimit;
  /** Text to speech (WAV) for the radio. */
  speech: SpeechSynthesizer;
  /** The service's Prometheus metrics (GET /metrics, HTTP answers, speech time). */
  metrics: ServiceMetrics;
  /** Server-Sent Events of committed changes (C6, C8, the console's streams). */
  live: LiveStreams;
}

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Bearer-token lookup shared by the routes that take tokens (one cache per app). */
    apiTokens: ApiTokens;
  }
}

/** Header names whose values never reach a log line. */
export const REDACTED_HEADERS = ['authorization', 'api-key', 'x-messaging-signature', 'x-twilio-signature', 'cookie'];

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    logger: {
      level: deps.config.logLevel,
      redact: { paths: REDACTED_HEADERS.map((h) => `req.headers["${h}"]`), censor: '[REDACTED]' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      },
    },
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
  app.decorate('apiTokens', apiTokenLookup(deps.db, deps.clock));
  app.decorateRequest('actor', null);
  app.decorateRequest('locker', null);
  registerErrorHandling(app);
  closeAfterEarlyAnswers(app);
  registerFailureLimit(app, deps.clock, deps.failureLimit, { trustProxy: deps.config.trustProxy });
  registerHttpMetrics(app, deps.metrics);

  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(swagger, openApiOptions());
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(homeRoutes);
  await app.register(healthRoutes, { db: deps.db, devices: deps.devices });
  await app.register(deviceRoutes, { mqttAuthSecret: deps.config.mqttAuthSecret, devices: deps.devices });
  await app.register(lockerRoutes, {
    db: deps.db,
    clock: deps.clock,
    secretDigest: deps.secretDigest,
    deviceSeen: (lockerId) => deps.devices.seen({ kind: 'locker', lockerId }),
  });
  await app.register(deviceHealthRoutes, { db: deps.db, clock: deps.clock, apiTokens: app.apiTokens, offlineSeconds: deps.config.deviceOfflineSeconds });
  await app.register(cfhRoutes, {
    db: deps.db,
    clock: deps.clock,
    timeoutSeconds: deps.config.cfhTimeoutSeconds,
    escalationSeconds: deps.config.cfhEscalationSeconds,
    apiTokens: app.apiTokens,
  });
  await app.register(buttonDisplayListRoutes, {
    db: deps.db,
    clock: deps.clock,
    timeoutSeconds: deps.config.cfhTimeoutSeconds,
    escalationSeconds: deps.config.cfhEscalationSeconds,
    offlineSeconds: deps.config.deviceOfflineSeconds,
    apiTokens: app.apiTokens,
  });
  await app.register(cfhStreamRoutes, { db: deps.db, live: deps.live, apiTokens: app.apiTokens });
  await app.register(cfhPageRoutes, { db: deps.db });
  await app.register(radioRoutes, {
    db: deps.db,
    clock: deps.clock,
    speech: deps.speech,
    publicBaseUrl: deps.config.publicBaseUrl,
    apiTokens: app.apiTokens,
    ttlSeconds: deps.config.radioMessageTtlSeconds,
    queueLimit: deps.config.radioQueueLimit,
    observeSynthesis: (seconds) => deps.metrics.observeSynthesis(seconds),
  });
  await app.register(webhookRoutes, { db: deps.db, clock: deps.clock, apiTokens: app.apiTokens });
  await app.register(reportRoutes, { db: deps.db, clock: deps.clock, apiTokens: app.apiTokens });
  await app.register(metricsRoutes, { db: deps.db, clock: deps.clock, metrics: deps.metrics, token: deps.config.metricsToken });
  await app.register(consoleRoutes, {
    db: deps.db,
    clock: deps.clock,
    publicBaseUrl: deps.config.publicBaseUrl,
    timeoutSeconds: deps.config.cfhTimeoutSeconds,
    escalationSeconds: deps.config.cfhEscalationSeconds,
    ttlSeconds: deps.config.radioMessageTtlSeconds,
    queueLimit: deps.config.radioQueueLimit,
    offlineSeconds: deps.config.deviceOfflineSeconds,
    speech: deps.speech,
    live: deps.live,
    observeSynthesis: (seconds) => deps.metrics.observeSynthesis(seconds),
  });

  return app;
}
