// Service accounts' and their tokens' SQL for section 18 (the provisioning file writes them too, by
// name). A limited administrator sees the tokens limited to its locations, and the accounts that
// hold one of them or hold no token at all (an empty account gives nothing to anyone).
import type { Queryable } from '../../db/db.ts';
import { sql, type Sql } from '../../db/sql.ts';
import type { TOKEN_SCOPES } from '../../provisioning/schema.ts';
import type { AdminScope } from '../../admin/rules.ts';

export interface TokenRow {
  id: number;
  service_account_id: number;
  /** As stored: views.ts tokenName reads the name an administrator gave. */
  name: string;
  scopes: (typeof TOKEN_SCOPES)[number][];
  location_ids: number[] | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface AccountRow {
  id: number;
  organization_id: number;
  name: string;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
  tokens: TokenRow[];
}

const limits = (scope: AdminScope) => (scope.locationIds === null ? null : [...scope.locationIds]);

/** The tokens (alias t) a scope sees: all of its organization's, or those limited within its locations. */
const tokenSeen = (scope: AdminScope): Sql =>
  sql`(${limits(scope)}::int[] IS NULL OR (t.location_ids IS NOT NULL AND t.location_ids <@ ${limits(scope)}::int[]))`;

/** The accounts (alias a) a scope sees. */
const accountSeen = (scope: AdminScope): Sql => sql`a.organization_id = ${scope.organizationId} AND (${limits(scope)}::int[] IS NULL
  OR NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.service_account_id = a.id)
  OR EXISTS (SELECT 1 FROM api_tokens t WHERE t.service_account_id = a.id AND ${tokenSeen(scope)}))`;

const ACCOUNT_COLUMNS = sql`a.id, a.organization_id, a.name, a.version, a.managed_by, a.created_at, a.updated_at`;
const TOKEN_COLUMNS = sql`t.id, t.service_account_id, t.name, t.scopes, t.location_ids, t.expires_at, t.last_used_at, t.revoked_at, t.created_at`;

async function withTokens(q: Queryable, scope: AdminScope, accounts: Omit<AccountRow, 'tokens'>[]): Promise<AccountRow[]> {
  if (accounts.length === 0) return [];
  const tokens = await q.run<TokenRow>(
    sql`SELECT ${TOKEN_COLUMNS} FROM api_tokens t WHERE t.service_account_id = ANY (${accounts.map((a) => a.id)}::int[]) AND ${tokenSeen(scope)} ORDER BY t.id`,
  );
  return accounts.map((a) => ({ ...a, tokens: tokens.filter((t) => t.service_account_id === a.id) }));
}

export async function listVisibleAccounts(q: Queryable, scope: AdminScope): Promise<AccountRow[]> {
  const accounts = await q.run<Omit<AccountRow, 'tokens'>>(sql`SELECT ${ACCOUNT_COLUMNS} FROM service_accounts a WHERE ${accountSeen(scope)} ORDER BY a.id`);
  return withTokens(q, scope, accounts);
}

/** The account, if the scope sees it; `lock` for a change (FOR UPDATE). */
export async function visibleAccount(q: Queryable, scope: AdminScope, id: number, lock = false): Promise<AccountRow | undefined> {
  const accounts = await q.run<Omit<AccountRow, 'tokens'>>(
    sql`SELECT ${ACCOUNT_COLUMNS} FROM service_accounts a WHERE a.id = ${id} AND ${accountSeen(scope)} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return (await withTokens(q, scope, accounts))[0];
}

/** A new account of administration; undefined when the organization has one of that name. */
export async function insertAccount(q: Queryable, organizationId: number, name: string, now: Date): Promise<AccountRow | undefined> {
  const [row] = await q.run<Omit<AccountRow, 'tokens'>>(sql`
    INSERT INTO service_accounts (organization_id, name, managed_by, created_at, updated_at) VALUES (${organizationId}, ${name}, 'admin', ${now}, ${now})
    ON CONFLICT (organization_id, name) DO NOTHING
    RETURNING id, organization_id, name, version, managed_by, created_at, updated_at`);
  return row === undefined ? undefined : { ...row, tokens: [] };
}

export interface NewTokenRow {
  accountId: number;
  organizationId: number;
  storedName: string;
  scopes: readonly string[];
  locationIds: readonly number[] | null;
  expiresAt: string | null;
  hash: string;
}

export async function insertToken(q: Queryable, t: NewTokenRow, now: Date): Promise<TokenRow> {
  const [row] = await q.run<TokenRow>(sql`
    INSERT INTO api_tokens AS t (name, organization_id, service_account_id, scopes, token_hash, expires_at, location_ids, created_at, updated_at)
    VALUES (${t.storedName}, ${t.organizationId}, ${t.accountId}, ${[...t.scopes]}::text[], ${t.hash}, ${t.expiresAt}::timestamptz,
      ${t.locationIds === null ? null : [...t.locationIds]}::int[], ${now}, ${now})
    RETURNING ${TOKEN_COLUMNS}`);
  return row as TokenRow;
}

/** Revokes the token (once: a revoked one keeps its time); the token as it is now. */
export async function revokeToken(q: Queryable, tokenId: number, now: Date): Promise<TokenRow> {
  const [row] = await q.run<TokenRow>(sql`
    UPDATE api_tokens t SET revoked_at = COALESCE(t.revoked_at, ${now}::timestamptz), updated_at = ${now} WHERE t.id = ${tokenId}
    RETURNING ${TOKEN_COLUMNS}`);
  return row as TokenRow;
}

/** The account's change time and version move on (a token was made or revoked). */
export async function touchAccount(q: Queryable, id: number, now: Date): Promise<void> {
  await q.run(sql`UPDATE service_accounts SET version = version + 1, updated_at = ${now} WHERE id = ${id}`);
}
