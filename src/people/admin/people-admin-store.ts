// People's SQL for section 18 (with people-store.ts, the writers of `people` and `memberships`): a
// person is found only within what the administrator reaches, and a limited administrator's change
// of memberships replaces the administration grants at its own locations only.
import type { Role } from '../../access/actor.ts';
import type { Queryable } from '../../db/db.ts';
import { sql, type Sql } from '../../db/sql.ts';
import type { Grant as PersonGrant } from '../people-store.ts';
import type { Grant } from './rules.ts';
import type { AdminScope } from '../../admin/rules.ts';

export interface AdminPersonRow {
  id: number;
  organization_id: number;
  email: string;
  name: string;
  status: 'active' | 'disabled';
  language: 'en' | 'fr' | null;
  has_password: boolean;
  must_change_password: boolean;
  has_pin: boolean;
  /** The badge's keyed digest (never shown: a view says has_badge). */
  badge_digest: string | null;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
  grants: { role: Role; location_id: number | null; granted_by: PersonGrant }[];
}

const COLUMNS = sql`p.id, p.organization_id, p.email, p.name, p.status, p.language, p.password_hash IS NOT NULL AS has_password,
  p.must_change_password, p.pin_hash IS NOT NULL AS has_pin, p.badge_digest, p.version, p.managed_by, p.created_at, p.updated_at,
  (SELECT coalesce(json_agg(json_build_object('role', m.role, 'location_id', m.location_id, 'granted_by', m.granted_by)
     ORDER BY m.role, m.location_id, m.granted_by), '[]') FROM memberships m WHERE m.person_id = p.id) AS grants`;

const locationsOf = (scope: AdminScope) => (scope.locationIds === null ? null : [...scope.locationIds]);

/** The people a scope sees: its organization's; a limited one, those with a role at its locations
 * (an org_admin's role covers every location, so org_admins are seen, though not changed). */
function visible(scope: AdminScope): Sql {
  return sql`p.organization_id = ${scope.organizationId} AND (${locationsOf(scope)}::int[] IS NULL OR EXISTS (
    SELECT 1 FROM memberships m WHERE m.person_id = p.id AND (m.location_id IS NULL OR m.location_id = ANY (${locationsOf(scope)}::int[]))))`;
}

export async function listVisiblePeople(q: Queryable, scope: AdminScope, locationId: number | null): Promise<AdminPersonRow[]> {
  const at =
    locationId === null
      ? sql.empty
      : sql`AND EXISTS (SELECT 1 FROM memberships m WHERE m.person_id = p.id AND (m.location_id IS NULL OR m.location_id = ${locationId}))`;
  return q.run<AdminPersonRow>(sql`SELECT ${COLUMNS} FROM people p WHERE ${visible(scope)} ${at} ORDER BY p.id`);
}

/** The person, if the scope sees them; `lock` for a change (FOR UPDATE). */
export async function visiblePerson(q: Queryable, scope: AdminScope, id: number, lock = false): Promise<AdminPersonRow | undefined> {
  const [row] = await q.run<AdminPersonRow>(
    sql`SELECT ${COLUMNS} FROM people p WHERE p.id = ${id} AND ${visible(scope)} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return row;
}

/** The ids among these that are locations of the organization. */
export async function locationsOfOrganization(q: Queryable, organizationId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await q.run<{ id: number }>(sql`SELECT id FROM locations WHERE organization_id = ${organizationId} AND id = ANY (${[...ids]}::int[])`);
  return rows.map((r) => r.id);
}

/** Takes the organization's administration lock (NO KEY UPDATE: rows referencing it are still
 * inserted), so that two changes of its org_admins are made one after the other. */
export async function lockOrganization(q: Queryable, organizationId: number): Promise<void> {
  await q.run(sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR NO KEY UPDATE`);
}

/** The organization's active org_admins but this person. */
export async function otherActiveOrgAdmins(q: Queryable, organizationId: number, personId: number): Promise<number> {
  const [row] = await q.run<{ n: number }>(sql`SELECT count(DISTINCT p.id)::int AS n FROM people p JOIN memberships m ON m.person_id = p.id
    WHERE p.organization_id = ${organizationId} AND p.id <> ${personId} AND p.status = 'active' AND m.role = 'org_admin'`);
  return row?.n ?? 0;
}

/** A secret's new value: unchanged (undefined), a new hash or digest, or none (null). */
export type SecretUpdate = string | null | undefined;

export interface PersonFields {
  email: string;
  name: string;
  status: 'active' | 'disabled';
  language: 'en' | 'fr' | null;
  passwordHash: SecretUpdate;
  pinHash: SecretUpdate;
  badgeDigest: SecretUpdate;
}

const set = (v: SecretUpdate) => v !== undefined;

/** A new person made by administration; its password, if any, is a one-time one. */
export async function insertAdminPerson(q: Queryable, organizationId: number, f: PersonFields, now: Date): Promise<number> {
  const [row] = await q.run<{ id: number }>(sql`
    INSERT INTO people (organization_id, email, name, status, language, password_hash, must_change_password, pin_hash, badge_digest,
      managed_by, created_at, updated_at)
    VALUES (${organizationId}, ${f.email}, ${f.name}, ${f.status}, ${f.language}, ${f.passwordHash ?? null}, ${f.passwordHash != null},
      ${f.pinHash ?? null}, ${f.badgeDigest ?? null}, 'admin', ${now}, ${now})
    RETURNING id`);
  return (row as { id: number }).id;
}

/** The person's fields and the secrets being set; the version moves on. */
export async function updatePersonFields(q: Queryable, id: number, f: PersonFields, now: Date): Promise<void> {
  await q.run(sql`
    UPDATE people SET email = ${f.email}, name = ${f.name}, status = ${f.status}, language = ${f.language},
      password_hash = CASE WHEN ${set(f.passwordHash)}::boolean THEN ${f.passwordHash ?? null}::text ELSE password_hash END,
      must_change_password = CASE WHEN ${set(f.passwordHash)}::boolean THEN ${f.passwordHash != null}::boolean ELSE must_change_password END,
      pin_hash = CASE WHEN ${set(f.pinHash)}::boolean THEN ${f.pinHash ?? null}::text ELSE pin_hash END,
      badge_digest = CASE WHEN ${set(f.badgeDigest)}::boolean THEN ${f.badgeDigest ?? null}::text ELSE badge_digest END,
      version = version + 1, updated_at = ${now}
    WHERE id = ${id}`);
}

/** Administration's grants added and removed (granted_by 'admin'). */
export async function changeAdminGrants(
  q: Queryable,
  person: { id: number; organizationId: number },
  changes: { granted: readonly Grant[]; revoked: readonly Grant[] },
  now: Date,
): Promise<void> {
  for (const g of changes.revoked) {
    await q.run(sql`DELETE FROM memberships WHERE person_id = ${person.id} AND granted_by = 'admin' AND role = ${g.role}
      AND location_id IS NOT DISTINCT FROM ${g.location_id}::int`);
  }
  if (changes.granted.length === 0) return;
  await q.run(sql`
    INSERT INTO memberships (person_id, organization_id, role, location_id, granted_by, created_at)
    SELECT ${person.id}, ${person.organizationId}, g.role, g.location_id, 'admin', ${now}
    FROM unnest(${changes.granted.map((g) => g.role)}::text[], ${changes.granted.map((g) => g.location_id)}::int[]) AS g (role, location_id)
    ON CONFLICT DO NOTHING`);
}

/** Which unique rule a failed insert or update broke, if it was one of a person's. */
export function takenField(err: unknown): 'email' | 'badge_code' | null {
  const e = err as { code?: string; constraint?: string };
  if (e?.code !== '23505') return null;
  if (e.constraint === 'people_email') return 'email';
  if (e.constraint === 'people_badge') return 'badge_code';
  return null;
}
