// Section 18's SSO role mappings: listSsoRoleMappings, createSsoRoleMapping, deleteSsoRoleMapping. A
// mapping grants its role over its locations to whoever signs in with its claim value; what it
// granted is computed again at each person's next single sign-on (section 17), so deleting one takes
// a role away at that sign-in (to cut someone off now: disable them, or end their sessions).
// A location_admin manages the mappings of its locations up to location_admin.
import type { OrganizationActor } from '../../access/actor.ts';
import { auditActorOf, changesBetween, writeAudit } from '../../audit/record.ts';
import { AppError, invalid, notFound } from '../../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../../http/if-match.ts';
import { checkedGrants } from './grants.ts';
import type { Acting, PeopleAdminDeps } from './people-admin.ts';
import { checkMayGrant } from './rules.ts';
import { checkNotFileManaged, checkOrganization, oneLocation, scopeOf } from '../../admin/rules.ts';
import type { NewSsoRoleMapping } from './schemas.ts';
import { deleteMapping, insertMapping, listVisibleMappings, visibleMapping, type MappingRow } from './sso-mapping-store.ts';

export async function listSsoRoleMappings(deps: PeopleAdminDeps, actor: OrganizationActor): Promise<MappingRow[]> {
  return listVisibleMappings(deps.db, scopeOf(actor));
}

const shown = (m: Pick<MappingRow, 'claim_value' | 'role' | 'location_ids'>) => ({ claim_value: m.claim_value, role: m.role, location_ids: m.location_ids });

export async function createSsoRoleMapping(deps: PeopleAdminDeps, acting: Acting, body: NewSsoRoleMapping): Promise<MappingRow> {
  const scope = scopeOf(acting.actor);
  checkOrganization(scope, body.organization_id);
  // Kept as given: the provider's claim is compared exactly.
  const claimValue = body.claim_value;
  if (claimValue.trim() === '') throw invalid('claim_value', 'must not be blank');
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    await checkedGrants(q, acting.actor, scope, [body], () => '');
    const locationIds = body.role === 'org_admin' ? null : [...new Set(body.location_ids ?? [])].sort((a, b) => a - b);
    const row = await insertMapping(q, { organizationId: scope.organizationId, claimValue, role: body.role, locationIds }, now);
    if (row === undefined) throw new AppError(409, 'sso_role_mapping_exists', `"${claimValue}" is mapped to ${body.role} already: delete that mapping first`);
    await writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action: 'sso_role_mapping.created',
        target: { type: 'sso_role_mapping', id: row.id, name: claimValue },
        organizationId: scope.organizationId,
        locationId: oneLocation(row.location_ids),
        changes: changesBetween(null, shown(row)),
        origin: acting.origin,
      },
      now,
    );
    return row;
  });
}

/** Deletes a mapping whose every location the administrator administers (403 otherwise). */
export async function deleteSsoRoleMapping(deps: PeopleAdminDeps, acting: Acting, id: number, expected: ExpectedVersions): Promise<void> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    const row = await visibleMapping(q, scope, id, true);
    if (row === undefined) throw notFound('SSO role mapping');
    checkMayGrant(acting.actor, scope, { role: row.role, location_ids: row.location_ids });
    checkNotFileManaged(row.managed_by, 'this mapping');
    checkVersion(expected, row.version);
    await deleteMapping(q, id);
    await writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action: 'sso_role_mapping.deleted',
        target: { type: 'sso_role_mapping', id: row.id, name: row.claim_value },
        organizationId: scope.organizationId,
        locationId: oneLocation(row.location_ids),
        changes: changesBetween(shown(row), null),
        origin: acting.origin,
      },
      now,
    );
  });
}
