// SSO role mappings' SQL for section 18 (the provisioning file writes them too). A limited
// administrator sees the mappings that grant a role at one of its locations; an org_admin mapping
// (of the whole organization) only organization administrators see.
import type { Role } from '../../access/actor.ts';
import type { Queryable } from '../../db/db.ts';
import { sql, type Sql } from '../../db/sql.ts';
import type { AdminScope } from '../../admin/rules.ts';

export interface MappingRow {
  id: number;
  organization_id: number;
  claim_value: string;
  role: Role;
  location_ids: number[] | null;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
}

const COLUMNS = sql`m.id, m.organization_id, m.claim_value, m.role, m.location_ids, m.version, m.managed_by, m.created_at, m.updated_at`;

function seen(scope: AdminScope): Sql {
  const limits = scope.locationIds === null ? null : [...scope.locationIds];
  return sql`m.organization_id = ${scope.organizationId} AND (${limits}::int[] IS NULL OR m.location_ids && ${limits}::int[])`;
}

export async function listVisibleMappings(q: Queryable, scope: AdminScope): Promise<MappingRow[]> {
  return q.run<MappingRow>(sql`SELECT ${COLUMNS} FROM sso_role_mappings m WHERE ${seen(scope)} ORDER BY m.id`);
}

export async function visibleMapping(q: Queryable, scope: AdminScope, id: number, lock = false): Promise<MappingRow | undefined> {
  const [row] = await q.run<MappingRow>(
    sql`SELECT ${COLUMNS} FROM sso_role_mappings m WHERE m.id = ${id} AND ${seen(scope)} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return row;
}

/** A new mapping of administration; undefined when the organization maps that claim to that role already. */
export async function insertMapping(
  q: Queryable,
  m: { organizationId: number; claimValue: string; role: Role; locationIds: readonly number[] | null },
  now: Date,
): Promise<MappingRow | undefined> {
  const [row] = await q.run<MappingRow>(sql`
    INSERT INTO sso_role_mappings AS m (organization_id, claim_value, role, location_ids, managed_by, created_at, updated_at)
    VALUES (${m.organizationId}, ${m.claimValue}, ${m.role}, ${m.locationIds === null ? null : [...m.locationIds]}::int[], 'admin', ${now}, ${now})
    ON CONFLICT (organization_id, claim_value, role) DO NOTHING
    RETURNING ${COLUMNS}`);
  return row;
}

export async function deleteMapping(q: Queryable, id: number): Promise<void> {
  await q.run(sql`DELETE FROM sso_role_mappings WHERE id = ${id}`);
}
