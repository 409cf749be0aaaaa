// The lockers feature as compose() builds it: L1-L9, the delayed close and pickup jobs, and
// section 18's administration of lockers and their cabinets.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import { lockerJobs } from './jobs.ts';
import { lockerRoutes } from './routes.ts';
import { lockerAdminRoutes, lockerKeyRoutes } from './admin-routes.ts';
import type { ApiTokens } from '../http/auth.ts';

export interface LockersModuleDeps {
  db: Db;
  clock: Clock;
  /** SHA-256 of the shared secret_token of L1-L6, L8, L9. */
  secretDigest: string;
  /** A locker was heard from (L7): device health's last-seen time. */
  deviceSeen: (lockerId: number) => void;
  /** Section 18's administration of lockers: its admin tokens and the service's own origin. */
  apiTokens: ApiTokens;
  publicBaseUrl: string;
}

export function lockersModule(deps: LockersModuleDeps): FeatureModule {
  return {
    routes: async (app) => {
      await routesOf(lockerRoutes, deps)(app);
      const admin = { db: deps.db, clock: deps.clock, apiTokens: deps.apiTokens, publicBaseUrl: deps.publicBaseUrl };
      await routesOf(lockerAdminRoutes, admin)(app);
      await routesOf(lockerKeyRoutes, admin)(app);
    },
    jobs: lockerJobs({ clock: deps.clock }),
  };
}
