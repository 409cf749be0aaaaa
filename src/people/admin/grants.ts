// The grants a body asks for (a person's memberships, an SSO role mapping), checked in the order a
// caller can act on: the shape (422), locations of the organization (422: another organization's
// location is not told from one that does not exist), then the administrator's authority (403).
import type { OrganizationActor } from '../../access/actor.ts';
import type { Queryable } from '../../db/db.ts';
import { invalid } from '../../http/errors.ts';
import { locationsOfOrganization } from './people-admin-store.ts';
import { checkMayGrant, grantsOf, subField, type Grant, type GrantInput } from './rules.ts';
import { unknownLocation, type AdminScope } from '../../admin/rules.ts';

export async function checkedGrants(
  q: Queryable,
  actor: OrganizationActor,
  scope: AdminScope,
  memberships: readonly GrantInput[],
  fieldOf: (index: number) => string,
): Promise<Grant[]> {
  const grants = memberships.flatMap((m, i) => grantsOf(m, fieldOf(i)));
  const named = [...new Set(grants.flatMap((g) => (g.location_id === null ? [] : [g.location_id])))];
  const known = await locationsOfOrganization(q, scope.organizationId, named);
  for (const [i, m] of memberships.entries()) {
    const unknown = unknownLocation(m.location_ids ?? [], known);
    if (unknown !== undefined) throw invalid(subField(fieldOf(i), 'location_ids'), `location ${unknown} not found`);
  }
  for (const m of memberships) checkMayGrant(actor, scope, m);
  const seen = new Set<string>();
  return grants.filter((g) => {
    const key = `${g.role}@${g.location_id}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
