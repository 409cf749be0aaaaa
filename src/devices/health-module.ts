// Device health as compose() builds it: D1 and the jobs that mark devices offline. The
// DeviceHealth itself is the gateway's presence listener, so compose() makes it first.
import type { ApiTokens } from '../http/auth.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { DeviceHealth, DeviceListDeps } from './health.ts';
import { deviceHealthRoutes } from './health-routes.ts';

export const deviceHealthModule = (health: DeviceHealth, deps: DeviceListDeps & { apiTokens: ApiTokens }): FeatureModule => ({
  routes: routesOf(deviceHealthRoutes, deps),
  jobs: health.jobs(),
});
