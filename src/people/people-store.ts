// People's SQL: this file is the one writer of `people` and `memberships`.
import type { Role } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';

export type Grant = 'admin' | 'sso' | 'file';

export interface PersonRow {
  id: number;
  organization_id: number;
  email: string;
  name: string;
  status: 'active' | 'disabled';
  password_hash: string | null;
  must_change_password: boolean;
  sso_subject: string | null;
  grants: { role: Role; location_id: number | null; granted_by: Grant }[];
}

const PERSON_COLUMNS = sql`p.id, p.organization_id, p.email, p.name, p.status, p.password_hash, p.must_change_password, p.sso_subject,
  (SELECT coalesce(json_agg(json_build_object('role', m.role, 'location_id', m.location_id, 'granted_by', m.granted_by)
     ORDER BY m.role, m.location_id), '[]') FROM memberships m WHERE m.person_id = p.id) AS grants`;

export async function personByEmail(q: Queryable, email: string): Promise<PersonRow | undefined> {
  const [row] = await q.run<PersonRow>(sql`SELECT ${PERSON_COLUMNS} FROM people p WHERE lower(p.email) = lower(${email})`);
  return row;
}

/** The person a single sign-on identity (issuer and subject) was bound to. */
export async function personBySubject(q: Queryable, subject: string): Promise<PersonRow | undefined> {
  const [row] = await q.run<PersonRow>(sql`SELECT ${PERSON_COLUMNS} FROM people p WHERE p.sso_subject = ${subject}`);
  return row;
}

/** Binds a person to their single sign-on identity (once: an identity of one person only). */
export async function bindSubject(q: Queryable, personId: number, subject: string): Promise<void> {
  await q.run(sql`UPDATE people SET sso_subject = ${subject} WHERE id = ${personId} AND sso_subject IS NULL`);
}

export async function personById(q: Queryable, id: number): Promise<PersonRow | undefined> {
  const [row] = await q.run<PersonRow>(sql`SELECT ${PERSON_COLUMNS} FROM people p WHERE p.id = ${id}`);
  return row;
}

export interface NewPerson {
  organizationId: number;
  email: string;
  name: string;
  passwordHash: string | null;
  mustChangePassword: boolean;
  managedBy: 'admin' | 'file';
}

/** A new person; undefined when the email is taken (case-insensitive). */
export async function insertPerson(q: Queryable, p: NewPerson, now: Date): Promise<{ id: number } | undefined> {
  const [row] = await q.run<{ id: number }>(sql`
    INSERT INTO people (organization_id, email, name, password_hash, must_change_password, managed_by, created_at, updated_at)
    VALUES (${p.organizationId}, ${p.email}, ${p.name}, ${p.passwordHash}, ${p.mustChangePassword}, ${p.managedBy}, ${now}, ${now})
    ON CONFLICT DO NOTHING RETURNING id`);
  return row;
}

/** Grants a role over locations (null: the organization, for org_admin); existing grants stay. */
export async function grantMemberships(
  q: Queryable,
  g: { personId: number; organizationId: number; role: Role; locationIds: readonly number[] | null; grantedBy: Grant },
  now: Date,
): Promise<void> {
  const locations = g.locationIds === null ? [null] : [...g.locationIds];
  await q.run(sql`
    INSERT INTO memberships (person_id, organization_id, role, location_id, granted_by, created_at)
    SELECT ${g.personId}, ${g.organizationId}, ${g.role}, l, ${g.grantedBy}, ${now} FROM unnest(${locations}::int[]) AS l
    ON CONFLICT DO NOTHING`);
}

/** Replaces a person's grants of one kind (a single sign-on's, recomputed at each sign-in). */
export async function replaceGrants(
  q: Queryable,
  personId: number,
  organizationId: number,
  grantedBy: Grant,
  grants: readonly { role: Role; locationId: number | null }[],
  now: Date,
): Promise<void> {
  await q.run(sql`DELETE FROM memberships WHERE person_id = ${personId} AND granted_by = ${grantedBy}`);
  if (grants.length === 0) return;
  await q.run(sql`
    INSERT INTO memberships (person_id, organization_id, role, location_id, granted_by, created_at)
    SELECT ${personId}, ${organizationId}, g.role, g.location_id, ${grantedBy}, ${now}
    FROM unnest(${grants.map((x) => x.role)}::text[], ${grants.map((x) => x.locationId)}::int[]) AS g (role, location_id)
    ON CONFLICT DO NOTHING`);
}

export async function setPassword(q: Queryable, personId: number, passwordHash: string, mustChange: boolean, now: Date): Promise<void> {
  await q.run(sql`UPDATE people SET password_hash = ${passwordHash}, must_change_password = ${mustChange}, version = version + 1, updated_at = ${now}
    WHERE id = ${personId}`);
}
