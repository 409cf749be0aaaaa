// Reports as compose() builds them: P1-P3.
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import type { ReportGate } from './gate.ts';
import { reportRoutes } from './routes.ts';

export const reportsModule = (deps: { db: Queryable; clock: Clock; apiTokens: ApiTokens; reportGate: ReportGate }): FeatureModule => ({
  routes: routesOf(reportRoutes, deps),
});
