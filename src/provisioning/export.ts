// `npm run provision -- --export FILE`: the current setup as a provisioning file (section 7),
// without secrets, read by the same mappings administration shows (each kind's entryOf), so that
// export, apply to an empty database and export again give the same file. Entries whose file
// form needs a secret (API tokens, radio edge devices, messaging accounts, webhooks) are left out;
// lockers and displays leave out their keys (applying makes new ones, shown by the apply).
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { objectsOfOrganization, type ObjectRow } from '../admin/object-store.ts';
import type { Entry, ObjectKind } from '../admin/objects.ts';
import { buttonKind, displayKind, optionKind, outcomeKind } from '../cfh/admin/kinds.ts';
import { locationKind } from '../locations/kind.ts';
import { lockerKind, type LockerRow } from '../lockers/admin-kind.ts';
import type { ProvisioningFile } from './schema.ts';

/** An entry as a file writes it: without what is absent (null) or the default (enabled true). */
function tidy<T extends object>(entry: T): T {
  return Object.fromEntries(Object.entries(entry).filter(([k, v]) => v !== null && v !== undefined && !(k === 'enabled' && v === true))) as T;
}

async function entries<R extends ObjectRow>(q: Queryable, kind: ObjectKind<R, Entry>, organizations: readonly number[]): Promise<Entry[]> {
  const out: Entry[] = [];
  for (const id of organizations) for (const row of await objectsOfOrganization<R>(q, kind.source, id)) out.push(tidy(kind.entryOf(row)));
  return out.sort((a, b) => a.id - b.id);
}

type Grant = { role: 'org_admin' | 'location_admin' | 'staff'; location_ids?: number[] };

async function people(q: Queryable): Promise<NonNullable<ProvisioningFile['people']>> {
  const rows = await q.run<{
    email: string;
    name: string;
    organization_id: number;
    status: 'active' | 'disabled';
    language: 'en' | 'fr' | null;
    grants: Grant[];
  }>(sql`
    SELECT p.email, p.name, p.organization_id, p.status, p.language,
      coalesce((SELECT json_agg(g ORDER BY g.role) FROM (
        SELECT m.role, CASE WHEN m.role = 'org_admin' THEN NULL ELSE array_agg(m.location_id ORDER BY m.location_id) END AS location_ids
        FROM memberships m WHERE m.person_id = p.id AND m.granted_by <> 'sso' GROUP BY m.role) g), '[]') AS grants
    FROM people p ORDER BY p.organization_id, lower(p.email)`);
  return rows.map((p) =>
    tidy({ email: p.email, name: p.name, organization_id: p.organization_id, status: p.status, language: p.language, memberships: p.grants.map(tidy) }),
  );
}

export async function exportProvisioning(q: Queryable): Promise<ProvisioningFile> {
  const organizations = await q.query<{ id: number; name: string }>('SELECT id, name FROM organizations ORDER BY id');
  const ids = organizations.map((o) => o.id);
  const kind = <R extends ObjectRow>(k: ObjectKind<R, never>) => k as unknown as ObjectKind<R, Entry>;
  const lockers: Entry[] = [];
  for (const id of ids) {
    for (const row of await objectsOfOrganization<LockerRow>(q, lockerKind.source, id)) {
      const { cabinets, ...locker } = lockerKind.entryOf(row);
      lockers.push(tidy({ ...locker, version: row.protocol_version, cabinets: (cabinets ?? []).map(tidy) }));
    }
  }
  const mappings = await q.query<NonNullable<ProvisioningFile['sso_role_mappings']>[number]>(
    `SELECT claim_value, organization_id, role, location_ids FROM sso_role_mappings ORDER BY organization_id, claim_value, role`,
  );
  return {
    organizations,
    locations: (await entries(q, kind(locationKind as never), ids)) as ProvisioningFile['locations'],
    lockers: lockers.sort((a, b) => a.id - b.id) as ProvisioningFile['lockers'],
    cfh_options: (await entries(q, kind(optionKind as never), ids)) as ProvisioningFile['cfh_options'],
    cfh_outcomes: (await entries(q, kind(outcomeKind as never), ids)) as ProvisioningFile['cfh_outcomes'],
    call_buttons: (await entries(q, kind(buttonKind as never), ids)) as ProvisioningFile['call_buttons'],
    cfh_displays: (await entries(q, kind(displayKind as never), ids)) as ProvisioningFile['cfh_displays'],
    people: await people(q),
    sso_role_mappings: mappings.map(tidy),
  };
}
