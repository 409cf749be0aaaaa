// People as compose() builds them (contract section 17): the session operations, badge and PIN
// sign-in on enrolled store devices, and single sign-on when it is configured.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import { createOidcClient } from './oidc.ts';
import { sessionRoutes } from './routes.ts';
import { ssoRoutes } from './sso-routes.ts';
import { storeDeviceSignIn, type StoreDeviceSignIn } from './store-device-sign-in.ts';

export interface PeopleModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl' | 'passwordSignIn' | 'oidc'>;
  /** Called with a session that signed out on this instance (its live streams end now). */
  sessionEnded: (sessionId: number) => void;
}

export interface PeopleModule extends FeatureModule {
  storeDevices: StoreDeviceSignIn;
}

export function peopleModule(deps: PeopleModuleDeps): PeopleModule {
  const { db, clock, config } = deps;
  const storeDevices = storeDeviceSignIn({ db, clock });
  const single = config.oidc;
  const oidc = single === null ? null : createOidcClient({ ...single, redirectUri: `${config.publicBaseUrl}/auth/oidc/callback` });
  const sessions = routesOf(sessionRoutes, {
    db,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    passwordSignIn: config.passwordSignIn,
    storeDevices,
    sessionEnded: deps.sessionEnded,
  });
  const sso = routesOf(ssoRoutes, { db, clock, oidc, publicBaseUrl: config.publicBaseUrl });
  return {
    storeDevices,
    routes: async (app) => {
      await sessions(app);
      await sso(app);
    },
  };
}
