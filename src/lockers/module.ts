// The lockers feature as compose() builds it: L1-L9 and the delayed close and pickup jobs.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import { lockerJobs } from './jobs.ts';
import { lockerRoutes } from './routes.ts';

export interface LockersModuleDeps {
  db: Db;
  clock: Clock;
  /** SHA-256 of the shared secret_token of L1-L6, L8, L9. */
  secretDigest: string;
  /** A locker was heard from (L7): device health's last-seen time. */
  deviceSeen: (lockerId: number) => void;
}

export function lockersModule(deps: LockersModuleDeps): FeatureModule {
  return {
    routes: routesOf(lockerRoutes, deps),
    jobs: lockerJobs({ clock: deps.clock }),
  };
}
