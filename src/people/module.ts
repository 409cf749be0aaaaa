// People as compose() builds them (contract sections 17 and 18): the session operations, badge and
// PIN sign-in on enrolled store devices, single sign-on when it is configured, and the
// administration of people, service accounts and SSO role mappings.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import { createOidcClient } from './oidc.ts';
import type { Hasher } from './passwords.ts';
import type { ApiTokens } from '../http/auth.ts';
import { peopleAdminRoutes, type AdminRouteDeps } from './admin/people-admin-routes.ts';
import { serviceAccountRoutes } from './admin/service-account-routes.ts';
import { ssoMappingRoutes } from './admin/sso-mapping-routes.ts';
import { sessionRoutes } from './routes.ts';
import { ssoRoutes } from './sso-routes.ts';
import { storeDeviceRoutes } from './store-device-routes.ts';
import { storeDeviceSignIn, type StoreDeviceSignIn } from './store-device-sign-in.ts';

export interface PeopleModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl' | 'passwordSignIn' | 'oidc'>;
  /** Where passwords and PINs are hashed. */
  hasher: Hasher;
  /** The bearer-token lookup the app shares (admin tokens, section 18). */
  apiTokens: ApiTokens;
  /** Called with a session that signed out on this instance (its live streams end now). */
  sessionEnded: (sessionId: number) => void;
}

export interface PeopleModule extends FeatureModule {
  storeDevices: StoreDeviceSignIn;
}

export function peopleModule(deps: PeopleModuleDeps): PeopleModule {
  const { db, clock, config } = deps;
  const { hasher } = deps;
  const storeDevices = storeDeviceSignIn({ db, clock, hasher });
  const single = config.oidc;
  const oidc = single === null ? null : createOidcClient({ ...single, redirectUri: `${config.publicBaseUrl}/auth/oidc/callback` });
  const sessions = routesOf(sessionRoutes, {
    db,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    passwordSignIn: config.passwordSignIn,
    hasher,
    storeDevices,
    sessionEnded: deps.sessionEnded,
  });
  const sso = routesOf(ssoRoutes, { db, clock, oidc, publicBaseUrl: config.publicBaseUrl });
  const admin: AdminRouteDeps = { db, clock, hasher, apiTokens: deps.apiTokens, publicBaseUrl: config.publicBaseUrl, sessionEnded: deps.sessionEnded };
  const administration = [routesOf(peopleAdminRoutes, admin), routesOf(serviceAccountRoutes, admin), routesOf(ssoMappingRoutes, admin)];
  return {
    storeDevices,
    routes: async (app) => {
      await sessions(app);
      await sso(app);
      for (const routes of administration) await routes(app);
      await routesOf(storeDeviceRoutes, { db, clock, apiTokens: deps.apiTokens, publicBaseUrl: config.publicBaseUrl, storeDevices })(app);
    },
  };
}
