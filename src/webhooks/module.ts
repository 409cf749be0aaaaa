// Webhooks as compose() builds them: the event log's fan-out to endpoints, the deliverer that sends
// what was fanned out (signed events, or Slack and Teams cards), W1 / W2, and section 18's
// administration of endpoints with testWebhook, which sends over the deliverer's own connections.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { webhookAdminRoutes } from './admin/routes.ts';
import { WebhookConnections } from './connections.ts';
import { WebhookDeliverer, type DelivererLogger } from './deliverer.ts';
import { WEBHOOKS_SUBSCRIBER, webhookFanOut } from './fanout.ts';
import { webhookRoutes } from './routes.ts';
import { sendTestEvent } from './test-send.ts';

export interface WebhooksModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookEndpointConcurrency' | 'publicBaseUrl'>;
  apiTokens: ApiTokens;
  log: DelivererLogger;
}

export interface WebhooksModule extends FeatureModule {
  /** Sends the deliveries; compose() starts and stops it with the service. */
  deliverer: WebhookDeliverer;
}

/** The whole exchange of one attempt, connection to the end of the answer (section 11's 10 s). */
const ATTEMPT_TIMEOUT_MS = 10_000;

export function webhooksModule(deps: WebhooksModuleDeps): WebhooksModule {
  const { db, clock, config, apiTokens, log } = deps;
  const publicBaseUrl = config.publicBaseUrl;
  const perEndpoint = config.webhookEndpointConcurrency;
  const connections = new WebhookConnections({ allowPrivate: config.webhookAllowPrivate, perOrigin: perEndpoint });
  const deliverer = new WebhookDeliverer({
    db,
    clock,
    allowPrivate: config.webhookAllowPrivate,
    perEndpoint,
    log,
    publicBaseUrl,
    connections,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
  });
  const sendTest = (target: Parameters<typeof sendTestEvent>[1]) => sendTestEvent({ clock, connections, publicBaseUrl, timeoutMs: ATTEMPT_TIMEOUT_MS }, target);
  const deliveries = routesOf(webhookRoutes, { db, clock, apiTokens });
  const administration = routesOf(webhookAdminRoutes, { db, clock, apiTokens, publicBaseUrl, sendTest });
  return {
    routes: async (app) => {
      await deliveries(app);
      await administration(app);
    },
    subscribers: { [WEBHOOKS_SUBSCRIBER]: webhookFanOut({ clock }) },
    deliverer,
  };
}
