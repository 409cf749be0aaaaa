// Call for Help as compose() builds it: C0-C9, B1, B2, the customer pages and the workflow's
// timers; section 18's administration of options, outcomes, call buttons and displays; and what
// the radio's voice actions and announcements may use of it.
import { deviceActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import type { LiveStreams } from '../live/streams.ts';
import { buttonDisplayListRoutes } from './button-routes.ts';
import { cfhJobs } from './jobs.ts';
import { cfhPageRoutes } from './page-routes.ts';
import { claimRequest, markOnTheWay } from './requests.ts';
import { cfhRoutes } from './routes.ts';
import { callButtonRoutes, cfhOptionRoutes, cfhOutcomeRoutes, cfhScanCodeRoutes, displayKeyRoutes, displayRoutes } from './admin/routes.ts';
import { cfhStreamRoutes } from './stream-routes.ts';
import { frenchOptionWords } from './words.ts';

export interface CfhModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'cfhTimeoutSeconds' | 'cfhEscalationSeconds' | 'deviceOfflineSeconds' | 'publicBaseUrl'>;
  apiTokens: ApiTokens;
  live: LiveStreams;
}

/** An edge device a voice action was heard on: CFH acts as it, within its location. */
interface HeardOn {
  edgeId: string;
  organizationId: number;
  locationId: number;
}

/** Who speaks on the radio: the speaker (else "Radio"). */
interface Speaker {
  name: string;
  userId: string;
  channelId: string;
}

export interface CfhModule extends FeatureModule {
  /** C1 and C2 from the radio, as the edge device that heard them: true if this step took effect. */
  voice: {
    claim(edge: HeardOn, messageId: string, speaker: Speaker): Promise<boolean>;
    onTheWay(edge: HeardOn, messageId: string, speaker: Speaker): Promise<boolean>;
  };
  /** An option's French words, for announcements in French. */
  frenchOptionWords: (requestId: number) => ReturnType<typeof frenchOptionWords>;
}

export function cfhModule(deps: CfhModuleDeps): CfhModule {
  const { db, clock, config, apiTokens, live } = deps;
  const requests = { db, clock, timeoutSeconds: config.cfhTimeoutSeconds, escalationSeconds: config.cfhEscalationSeconds };
  const actor = (edge: HeardOn) => deviceActor('edge_device', edge.edgeId, edge);
  return {
    routes: async (app) => {
      await routesOf(cfhRoutes, { ...requests, apiTokens })(app);
      await routesOf(buttonDisplayListRoutes, { ...requests, offlineSeconds: config.deviceOfflineSeconds, apiTokens })(app);
      await routesOf(cfhStreamRoutes, { db, live, apiTokens })(app);
      await routesOf(cfhPageRoutes, { db })(app);
      const admin = { db, clock, apiTokens, publicBaseUrl: config.publicBaseUrl };
      for (const routes of [cfhOptionRoutes, cfhOutcomeRoutes, callButtonRoutes, displayRoutes(config.publicBaseUrl), displayKeyRoutes, cfhScanCodeRoutes]) {
        await routesOf(routes, admin)(app);
      }
    },
    jobs: cfhJobs(),
    voice: {
      claim: (edge, messageId, s) => claimRequest(requests, actor(edge), messageId, { ...s, from: 'radio' }),
      onTheWay: (edge, messageId, s) => markOnTheWay(requests, actor(edge), messageId, { ...s, from: 'radio' }),
    },
    frenchOptionWords: (requestId) => frenchOptionWords(db, requestId),
  };
}
