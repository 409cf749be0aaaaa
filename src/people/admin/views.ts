// Wire formats of section 18's people, service accounts, tokens and SSO role mappings. Secrets never
// leave: a person shows has_password / has_pin / has_badge, a token never its value.
import { ROLES, type Role } from '../../access/actor.ts';
import type { Grant as Granted } from '../people-store.ts';
import type { AdminPersonRow } from './people-admin-store.ts';
import type { AccountRow, TokenRow } from './service-account-store.ts';
import type { MappingRow } from './sso-mapping-store.ts';

const GRANTED_BY: readonly Granted[] = ['admin', 'file', 'sso'];

/** A person's grants as memberships: one per role and way of granting, its locations together. */
export function membershipsView(grants: AdminPersonRow['grants']): { role: Role; location_ids: number[] | null; granted_by: Granted }[] {
  const out: { role: Role; location_ids: number[] | null; granted_by: Granted }[] = [];
  for (const role of ROLES) {
    for (const by of GRANTED_BY) {
      const mine = grants.filter((g) => g.role === role && g.granted_by === by);
      if (mine.length === 0) continue;
      const whole = mine.some((g) => g.location_id === null);
      out.push({ role, location_ids: whole ? null : [...new Set(mine.map((g) => g.location_id as number))].sort((a, b) => a - b), granted_by: by });
    }
  }
  return out;
}

export function personView(row: AdminPersonRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    email: row.email,
    name: row.name,
    status: row.status,
    language: row.language,
    memberships: membershipsView(row.grants),
    has_password: row.has_password,
    must_change_password: row.must_change_password,
    has_pin: row.has_pin,
    has_badge: row.badge_digest !== null,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The name an administrator gave a token: administration stores `admin:<account>:<random>:<name>`
 * (api_tokens.name is unique across the service, as the provisioning file names its tokens). */
const ADMIN_TOKEN_NAME = /^admin:(\d+):[0-9a-f]{12}:([\s\S]*)$/;

export const storedTokenName = (serviceAccountId: number, random: string, name: string): string => `admin:${serviceAccountId}:${random}:${name}`;

export function tokenName(row: Pick<TokenRow, 'name' | 'service_account_id'>): { name: string; managedBy: 'admin' | 'file' } {
  const m = ADMIN_TOKEN_NAME.exec(row.name);
  if (m !== null && Number(m[1]) === row.service_account_id) return { name: m[2] as string, managedBy: 'admin' };
  return { name: row.name, managedBy: 'file' };
}

export function tokenView(row: TokenRow) {
  const { name, managedBy } = tokenName(row);
  return {
    id: row.id,
    name,
    scopes: row.scopes,
    location_ids: row.location_ids,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
    managed_by: managedBy,
    created_at: row.created_at,
  };
}

export function serviceAccountView(row: AccountRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    tokens: row.tokens.map(tokenView),
  };
}

export function mappingView(row: MappingRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    claim_value: row.claim_value,
    role: row.role,
    location_ids: row.location_ids,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
