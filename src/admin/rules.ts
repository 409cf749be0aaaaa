// The rules every section 18 operation shares, as pure functions: what an administrator reaches (its
// scope), and the refusals of an object the file owns or of another organization. No I/O.
import type { OrganizationActor } from '../access/actor.ts';
import { AppError, invalid } from '../http/errors.ts';
import { administeredBy } from './auth.ts';

/** What an administrator administers: its organization and, when limited, those locations. */
export interface AdminScope {
  organizationId: number;
  /** null: the whole organization (an org_admin, or an admin token limited to no location). */
  locationIds: readonly number[] | null;
}

export function scopeOf(actor: OrganizationActor): AdminScope {
  const reach = administeredBy(actor).reach;
  return { organizationId: reach.organizationId, locationIds: reach.locationIds };
}

export const isOrganizationWide = (scope: AdminScope): boolean => scope.locationIds === null;

export const forbidden = (message: string) => new AppError(403, 'forbidden', message);

/** The first location named that is not of the organization (422: whether it exists elsewhere is not told). */
export function unknownLocation(named: readonly number[], known: readonly number[]): number | undefined {
  return named.find((id) => !known.includes(id));
}

/** The location an audit entry is filed under: the object's one location, if it has exactly one. */
export const oneLocation = (ids: readonly number[] | null | undefined): number | null => (ids?.length === 1 ? (ids[0] ?? null) : null);

/** 409 unless the object is administration's own. */
export function checkNotFileManaged(managedBy: string, what: string): void {
  if (managedBy === 'file') {
    throw new AppError(409, 'managed_by_file', `${what} is managed by the provisioning file: change it there (the next apply would undo a change made here)`);
  }
}

/** 422 unless a body's organization_id, when given, is the administrator's own. */
export function checkOrganization(scope: AdminScope, organizationId: number | undefined): void {
  if (organizationId !== undefined && organizationId !== scope.organizationId) throw invalid('organization_id', 'must be your own organization');
}
