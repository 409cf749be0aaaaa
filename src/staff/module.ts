// The staff app as compose() builds it (contract section 19): its routes, with the console's
// dependencies, since it is another face of the same use cases.
import { routesOf, type FeatureModule } from '../feature-module.ts';
import { consoleRouteDeps, type ConsoleModuleDeps } from '../console/module.ts';
import { staffRoutes } from './routes.ts';

export function staffModule(deps: Omit<ConsoleModuleDeps, 'reportGate'>): FeatureModule {
  return { routes: routesOf(staffRoutes, consoleRouteDeps(deps)) };
}
