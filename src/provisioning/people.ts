// The provisioning file's service accounts (its api_tokens), people and SSO role mappings (contract
// sections 7 and 17), and the audit entry of each applied file. A file never carries a password or
// a PIN; the memberships it names are its own grants, replaced at each apply, so an
// administrator's grants stay.
import { auditInsert, provisioningActor } from '../audit/record.ts';
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { sha256hex } from '../http/secrets.ts';
import { entry, organizationOfLocation, ProvisioningError, type ProvisioningSummary } from './apply.ts';
import type { ProvisioningFile } from './schema.ts';

type Grant = { role: 'org_admin' | 'location_admin' | 'staff'; location_ids?: number[] | null | undefined };

/** A grant's locations, checked to be of the organization: null for org_admin, some for the others. */
async function grantLocations(q: Queryable, where: string, organizationId: number, grant: Grant): Promise<number[] | null> {
  const ids = grant.location_ids ?? null;
  if (grant.role === 'org_admin') {
    if (ids !== null) throw new ProvisioningError(`${where}.location_ids: an org_admin holds the whole organization; leave location_ids out`);
    return null;
  }
  if (ids === null) throw new ProvisioningError(`${where}.location_ids: a ${grant.role} needs the locations it holds`);
  for (const [j, id] of ids.entries()) {
    if ((await organizationOfLocation(q, `${where}.location_ids[${j}]`, id)) !== organizationId) {
      throw new ProvisioningError(`${where}.location_ids[${j}]: location ${id} is not of organization ${organizationId}`);
    }
  }
  return ids;
}

/** Each token is a token of the service account of its name (made when missing). */
export async function applyTokens(q: Queryable, tokens: NonNullable<ProvisioningFile['api_tokens']>, now: Date, summary: ProvisioningSummary): Promise<void> {
  for (const [i, t] of tokens.entries()) {
    const where = `api_tokens[${i}]`;
    await entry(where, async () => {
      for (const [j, locationId] of (t.location_ids ?? []).entries()) {
        const organizationId = await organizationOfLocation(q, `${where}.location_ids[${j}]`, locationId);
        if (organizationId !== t.organization_id) {
          throw new ProvisioningError(`${where}.location_ids[${j}]: location ${locationId} is not of organization ${t.organization_id}`);
        }
      }
      await q.run(sql`
        WITH account AS (
          INSERT INTO service_accounts (organization_id, name, managed_by, created_at, updated_at)
          VALUES (${t.organization_id}, ${t.name}, 'file', ${now}, ${now})
          ON CONFLICT (organization_id, name) DO UPDATE SET managed_by = 'file', updated_at = EXCLUDED.updated_at
            WHERE service_accounts.managed_by <> 'file'
          RETURNING id
        ), account_id AS (
          SELECT id FROM account UNION ALL
          SELECT id FROM service_accounts WHERE organization_id = ${t.organization_id} AND name = ${t.name} LIMIT 1
        ), ins AS (
          INSERT INTO api_tokens (name, organization_id, service_account_id, scopes, token_hash, expires_at, revoked_at, location_ids, created_at, updated_at)
          SELECT ${t.name}, ${t.organization_id}, id, ${t.scopes}, ${sha256hex(t.token)}, ${t.expires_at ?? null},
            CASE WHEN ${t.revoked ?? false}::boolean THEN ${now}::timestamptz END, ${t.location_ids ?? null}, ${now}, ${now}
          FROM account_id LIMIT 1
          ON CONFLICT (name) DO NOTHING
        )
        UPDATE api_tokens SET organization_id = ${t.organization_id}, service_account_id = (SELECT id FROM account_id LIMIT 1), scopes = ${t.scopes},
          token_hash = ${sha256hex(t.token)}, expires_at = ${t.expires_at ?? null},
          revoked_at = CASE WHEN ${t.revoked ?? false}::boolean THEN COALESCE(revoked_at, ${now}::timestamptz) END, location_ids = ${t.location_ids ?? null},
          updated_at = ${now}
        WHERE name = ${t.name} AND (organization_id, service_account_id, scopes, token_hash, expires_at, revoked_at IS NOT NULL, location_ids)
          IS DISTINCT FROM (${t.organization_id}, (SELECT id FROM account_id LIMIT 1), ${t.scopes}::text[], ${sha256hex(t.token)},
            ${t.expires_at ?? null}::timestamptz, ${t.revoked ?? false}::boolean, ${t.location_ids ?? null}::int[])`);
    });
    summary.api_tokens++;
  }
}

/**
 * Revokes the tokens an earlier file made that this file no longer lists, so removing a token from
 * the file ends it. Only what a file owns is touched: tokens of file-managed service accounts (an
 * administrator cannot add tokens to those) of the organizations this file lists under
 * `organizations`; a file that only adds to an organization it does not list (a partial file) revokes
 * nothing. Tokens made by administration are never touched.
 */
export async function revokeUnlisted(q: Queryable, file: ProvisioningFile, now: Date, summary: ProvisioningSummary): Promise<void> {
  const tokens = file.api_tokens ?? [];
  const organizations = (file.organizations ?? []).map((o) => o.id);
  if (organizations.length === 0) return;
  const revoked = await q.run<{ id: number }>(sql`
    UPDATE api_tokens t SET revoked_at = ${now}, updated_at = ${now}
    FROM service_accounts a
    WHERE a.id = t.service_account_id AND a.managed_by = 'file' AND a.name = t.name AND t.revoked_at IS NULL
      AND t.organization_id = ANY(${organizations}::int[]) AND NOT (t.name = ANY(${tokens.map((t) => t.name)}::text[]))
    RETURNING t.id`);
  if (revoked.length > 0) summary.api_tokens_revoked = revoked.length;
}

export async function applyPeople(q: Queryable, file: ProvisioningFile, now: Date, summary: ProvisioningSummary): Promise<void> {
  for (const [i, p] of (file.people ?? []).entries()) {
    const where = `people[${i}]`;
    await entry(where, async () => {
      const grants: { role: string; location: number | null }[] = [];
      for (const [j, m] of p.memberships.entries()) {
        const ids = await grantLocations(q, `${where}.memberships[${j}]`, p.organization_id, m);
        for (const location of ids ?? [null]) grants.push({ role: m.role, location });
      }
      const [person] = await q.run<{ id: number; organization_id: number }>(sql`
        WITH ins AS (
          INSERT INTO people (organization_id, email, name, status, language, managed_by, created_at, updated_at)
          VALUES (${p.organization_id}, ${p.email}, ${p.name}, ${p.status ?? 'active'}, ${p.language ?? null}, 'file', ${now}, ${now})
          ON CONFLICT DO NOTHING RETURNING id, organization_id
        ), upd AS (
          UPDATE people SET name = ${p.name}, status = ${p.status ?? 'active'}, language = ${p.language ?? null}, managed_by = 'file',
            version = version + 1, updated_at = ${now}
          WHERE lower(email) = lower(${p.email}) AND NOT EXISTS (SELECT 1 FROM ins)
            AND (name, status, language, managed_by) IS DISTINCT FROM (${p.name}, ${p.status ?? 'active'}, ${p.language ?? null}::text, 'file')
          RETURNING id, organization_id
        )
        SELECT id, organization_id FROM ins UNION ALL SELECT id, organization_id FROM upd
        UNION ALL SELECT id, organization_id FROM people WHERE lower(email) = lower(${p.email}) AND NOT EXISTS (SELECT 1 FROM ins)
        LIMIT 1`);
      if (person === undefined || person.organization_id !== p.organization_id) {
        throw new ProvisioningError(`${where}.email: ${p.email} is a person of another organization`);
      }
      await q.run(sql`DELETE FROM memberships WHERE person_id = ${person.id} AND granted_by = 'file'`);
      await q.run(sql`
        INSERT INTO memberships (person_id, organization_id, role, location_id, granted_by, created_at)
        SELECT ${person.id}, ${p.organization_id}, g.role, g.location_id, 'file', ${now}
        FROM unnest(${grants.map((g) => g.role)}::text[], ${grants.map((g) => g.location)}::int[]) AS g (role, location_id)
        ON CONFLICT DO NOTHING`);
    });
    summary.people = (summary.people ?? 0) + 1;
  }
  for (const [i, m] of (file.sso_role_mappings ?? []).entries()) {
    const where = `sso_role_mappings[${i}]`;
    await entry(where, async () => {
      const ids = await grantLocations(q, where, m.organization_id, m);
      await q.run(sql`
        INSERT INTO sso_role_mappings (organization_id, claim_value, role, location_ids, managed_by, created_at, updated_at)
        VALUES (${m.organization_id}, ${m.claim_value}, ${m.role}, ${ids}, 'file', ${now}, ${now})
        ON CONFLICT (organization_id, claim_value, role) DO UPDATE SET location_ids = EXCLUDED.location_ids, managed_by = 'file',
          version = sso_role_mappings.version + 1, updated_at = EXCLUDED.updated_at
        WHERE (sso_role_mappings.location_ids, sso_role_mappings.managed_by) IS DISTINCT FROM (EXCLUDED.location_ids, 'file')`);
    });
    summary.sso_role_mappings = (summary.sso_role_mappings ?? 0) + 1;
  }
}

/** One audit entry per organization the file names: what it applied, by kind. */
export async function auditApplied(q: Queryable, file: ProvisioningFile, summary: ProvisioningSummary, source: string | null, now: Date): Promise<void> {
  const organizations = new Set<number>([
    ...(file.organizations ?? []).map((o) => o.id),
    ...(file.locations ?? []).map((l) => l.organization_id),
    ...(file.api_tokens ?? []).map((t) => t.organization_id),
    ...(file.people ?? []).map((p) => p.organization_id),
    ...(file.sso_role_mappings ?? []).map((m) => m.organization_id),
    ...(file.webhooks ?? []).map((w) => w.organization_id),
  ]);
  for (const organizationId of organizations) {
    await q.run(
      auditInsert(
        {
          actor: provisioningActor(source),
          action: 'provisioning.applied',
          target: { type: 'provisioning_file', id: null, name: source },
          organizationId,
          changes: { applied: { from: null, to: summary } },
        },
        now,
      ),
    );
  }
}
