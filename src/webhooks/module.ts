// Webhooks as compose() builds them: the event log's fan-out to endpoints, the deliverer that sends
// what was fanned out, and W1 / W2.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { WebhookDeliverer, type DelivererLogger } from './deliverer.ts';
import { WEBHOOKS_SUBSCRIBER, webhookFanOut } from './fanout.ts';
import { webhookRoutes } from './routes.ts';

export interface WebhooksModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookEndpointConcurrency'>;
  apiTokens: ApiTokens;
  log: DelivererLogger;
}

export interface WebhooksModule extends FeatureModule {
  /** Sends the deliveries; compose() starts and stops it with the service. */
  deliverer: WebhookDeliverer;
}

export function webhooksModule(deps: WebhooksModuleDeps): WebhooksModule {
  const { db, clock, config, apiTokens, log } = deps;
  return {
    routes: routesOf(webhookRoutes, { db, clock, apiTokens }),
    subscribers: { [WEBHOOKS_SUBSCRIBER]: webhookFanOut({ clock }) },
    deliverer: new WebhookDeliverer({ db, clock, allowPrivate: config.webhookAllowPrivate, perEndpoint: config.webhookEndpointConcurrency, log }),
  };
}
