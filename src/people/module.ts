// People as compose() builds them (contract section 17): the session operations, badge and PIN
// sign-in on enrolled store devices and their administration (section 18), and single sign-on when
// it is configured.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { sessionRoutes } from './routes.ts';
import { storeDeviceRoutes } from './store-device-routes.ts';
import { storeDeviceSignIn, type StoreDeviceSignIn } from './store-device-sign-in.ts';

export interface PeopleModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl' | 'passwordSignIn' | 'oidc'>;
  /** The bearer-token lookup the features share (section 18's admin tokens). */
  apiTokens: ApiTokens;
  /** Called with a session that signed out on this instance (its live streams end now). */
  sessionEnded: (sessionId: number) => void;
}

export interface PeopleModule extends FeatureModule {
  storeDevices: StoreDeviceSignIn;
}

export function peopleModule(deps: PeopleModuleDeps): PeopleModule {
  const { db, clock, config } = deps;
  const storeDevices = storeDeviceSignIn({ db, clock });
  return {
    storeDevices,
    routes: async (app) => {
      await routesOf(sessionRoutes, {
        db,
        clock,
        publicBaseUrl: config.publicBaseUrl,
        passwordSignIn: config.passwordSignIn,
        storeDevices,
        sessionEnded: deps.sessionEnded,
      })(app);
      await routesOf(storeDeviceRoutes, { db, clock, apiTokens: deps.apiTokens, publicBaseUrl: config.publicBaseUrl, storeDevices })(app);
    },
  };
}
