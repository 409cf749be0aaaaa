// Locations as compose() builds them: section 18's administration of the stores themselves.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { locationRoutes } from './admin-routes.ts';

export interface LocationsModuleDeps {
  db: Db;
  clock: Clock;
  apiTokens: ApiTokens;
  publicBaseUrl: string;
}

export function locationsModule(deps: LocationsModuleDeps): FeatureModule {
  return { routes: routesOf(locationRoutes, deps) };
}
