// The staff app as compose() builds it (contract section 19): its routes, with the console's
// dependencies, since it is another face of the same use cases.
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ConsoleModuleDeps } from '../console/module.ts';
import { signInWays } from '../console/sign-in-options.ts';
import { staffRoutes } from './routes.ts';

export function staffModule(deps: Omit<ConsoleModuleDeps, 'reportGate'>): FeatureModule {
  const { config } = deps;
  return {
    routes: routesOf(staffRoutes, {
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
    }),
  };
}
