// The operations console as compose() builds it: its pages, sign-in, its API and its live stream.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { LiveStreams } from '../live/streams.ts';
import type { SpeechSynthesizer } from '../radio/speech/speech.ts';
import type { ReportGate } from '../reports/gate.ts';
import type { StoreDeviceSignIn } from '../people/store-device-sign-in.ts';
import { consoleRoutes, type ConsoleRouteDeps } from './routes.ts';
import { signInWays } from './sign-in-options.ts';

export interface ConsoleModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<
    Config,
    | 'publicBaseUrl'
    | 'cfhTimeoutSeconds'
    | 'cfhEscalationSeconds'
    | 'radioMessageTtlSeconds'
    | 'radioQueueLimit'
    | 'deviceOfflineSeconds'
    | 'oidc'
    | 'passwordSignIn'
  >;
  speech: SpeechSynthesizer;
  live: LiveStreams;
  observeSynthesis: (seconds: number) => void;
  /** The people module's: which enrolled store device a browser is, for the sign-in page. */
  storeDevices: Pick<StoreDeviceSignIn, 'deviceOf'>;
  /** The reports' (one per instance): the Reports page's reports count with the API's. */
  reportGate: ReportGate;
}

/** The route deps of the console's use cases, from the module's: the staff app's too. */
export function consoleRouteDeps(deps: Omit<ConsoleModuleDeps, 'reportGate'>): Omit<ConsoleRouteDeps, 'reportGate'> {
  const { config } = deps;
  return {
    db: deps.db,
    clock: deps.clock,
    publicBaseUrl: config.publicBaseUrl,
    timeoutSeconds: config.cfhTimeoutSeconds,
    escalationSeconds: config.cfhEscalationSeconds,
    ttlSeconds: config.radioMessageTtlSeconds,
    queueLimit: config.radioQueueLimit,
    offlineSeconds: config.deviceOfflineSeconds,
    speech: deps.speech,
    live: deps.live,
    observeSynthesis: deps.observeSynthesis,
    signInWays: signInWays(config),
    storeDevices: deps.storeDevices,
  };
}

export function consoleModule(deps: ConsoleModuleDeps): FeatureModule {
  return { routes: routesOf(consoleRoutes, { ...consoleRouteDeps(deps), reportGate: deps.reportGate }) };
}
