// The rules of section 18's people, service accounts and SSO role mappings, as pure functions: what
// an administrator reaches (its scope), which grants it may make, which people it may change, and
// what a change of grants adds and removes. No I/O: the use cases read, these decide.
import { mayGrant, type OrganizationActor, type Role } from '../../access/actor.ts';
import { invalid } from '../../http/errors.ts';
import { forbidden, isOrganizationWide, type AdminScope } from '../../admin/rules.ts';

/** A role at a location (null: the whole organization, an org_admin's). */
export interface Grant {
  role: Role;
  location_id: number | null;
}

export interface GrantInput {
  role: Role;
  location_ids?: readonly number[] | null | undefined;
}

/** A field within a field of the body ('' is the body itself). */
export const subField = (field: string, name: string): string => (field === '' ? name : `${field}.${name}`);

/** The grants a membership names; 422 by field when an org_admin names locations or another role none. */
export function grantsOf(membership: GrantInput, field: string): Grant[] {
  const ids = membership.location_ids ?? null;
  if (membership.role === 'org_admin') {
    if (ids !== null) throw invalid(subField(field, 'location_ids'), 'an org_admin holds the whole organization; leave location_ids out');
    return [{ role: 'org_admin', location_id: null }];
  }
  if (ids === null) throw invalid(subField(field, 'location_ids'), `a ${membership.role} needs the locations it holds`);
  return ids.map((id) => ({ role: membership.role, location_id: id }));
}

/**
 * 403 unless the actor may grant this role over these locations: nobody grants beyond mayGrant (a
 * location_admin never grants org_admin), and a limited administrator only at its own locations.
 * `known` are the locations of the organization among those named (the others are 422 first).
 */
export function checkMayGrant(actor: OrganizationActor, scope: AdminScope, membership: GrantInput): void {
  if (!mayGrant(actor, membership.role)) throw forbidden(`you may not grant the ${membership.role} role`);
  if (membership.role === 'org_admin' && !isOrganizationWide(scope)) throw forbidden('only an organization administrator grants org_admin');
  const outside = (membership.location_ids ?? []).find((id) => scope.locationIds !== null && !scope.locationIds.includes(id));
  if (outside !== undefined) throw forbidden(`you do not administer location ${outside}`);
}

/**
 * Why a limited administrator may not change this person as a whole (their name, email, status,
 * secrets, sessions), or null when it may: an org_admin is changed by organization administrators
 * only, and a person who also works where the administrator does not is changed there too.
 */
export function whyNotChangePerson(scope: AdminScope, grants: readonly Grant[]): string | null {
  if (isOrganizationWide(scope)) return null;
  if (grants.some((g) => g.role === 'org_admin')) return 'only an organization administrator changes an org_admin';
  const mine = scope.locationIds ?? [];
  if (grants.some((g) => g.location_id !== null && !mine.includes(g.location_id))) {
    return 'this person also has roles at locations you do not administer: change their memberships at yours only';
  }
  return null;
}

/**
 * Why this scope may not set another person's password, PIN or badge, if it may not: only an
 * organization-wide administrator does. A credential outlives the roles it was set for: a location
 * admin's PIN on someone a single sign-on later makes an org_admin would be the location admin's
 * way into the whole organization.
 */
export function whyNotSetCredentials(scope: AdminScope, body: { password?: unknown; pin?: unknown; badge_code?: unknown }): string | null {
  if (isOrganizationWide(scope)) return null;
  const sets = [body.password, body.pin, body.badge_code].some((v) => v !== undefined && v !== null && v !== false);
  return sets ? "only an organization administrator sets a person's password, PIN or badge" : null;
}

/** Whether a grant is one a scope administers (its memberships there are the scope's to replace). */
export function grantWithin(scope: AdminScope, grant: Grant): boolean {
  if (scope.locationIds === null) return true;
  return grant.location_id !== null && scope.locationIds.includes(grant.location_id);
}

const keyOf = (g: Grant) => `${g.role}@${g.location_id ?? '*'}`;

/** What replacing `current` by `desired` grants and revokes (each grant once). */
export function grantChanges(current: readonly Grant[], desired: readonly Grant[]): { granted: Grant[]; revoked: Grant[] } {
  const now = new Set(current.map(keyOf));
  const wanted = new Map(desired.map((g) => [keyOf(g), g]));
  return {
    granted: [...wanted.values()].filter((g) => !now.has(keyOf(g))),
    revoked: current.filter((g) => !wanted.has(keyOf(g))),
  };
}

/** Whether grants make an active person an org_admin (any way it was granted). */
export const isActiveOrgAdmin = (status: string, grants: readonly Grant[]): boolean => status === 'active' && grants.some((g) => g.role === 'org_admin');
