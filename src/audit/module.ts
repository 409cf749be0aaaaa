// The audit log as compose() builds it: its two read operations (section 18). Entries are written by
// each change's own use case (record.ts) and deleted by retention after AUDIT_RETENTION_DAYS.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { auditRoutes } from './routes.ts';

export interface AuditModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl'>;
  apiTokens: ApiTokens;
}

export function auditModule(deps: AuditModuleDeps): FeatureModule {
  return { routes: routesOf(auditRoutes, { db: deps.db, clock: deps.clock, apiTokens: deps.apiTokens, publicBaseUrl: deps.config.publicBaseUrl }) };
}
