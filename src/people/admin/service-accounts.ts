// Section 18's service accounts and their tokens: listServiceAccounts, createServiceAccount,
// createServiceAccountToken and revokeServiceAccountToken. A token is shown once, when made, and
// stored as its SHA-256 (as the provisioning file's are); a revoked one is refused at its next
// request on every instance (http/auth.ts keeps a live token for at most a second).
//
// A limited administrator (a location_admin, or an admin token limited to locations) makes tokens
// limited to its own locations, and sees those and the accounts that hold them or hold nothing.
import crypto from 'node:crypto';
import { mayGrant, type OrganizationActor } from '../../access/actor.ts';
import { auditActorOf, changesBetween, SECRET_CHANGE, writeAudit, type AuditChanges } from '../../audit/record.ts';
import type { Queryable } from '../../db/db.ts';
import { AppError, invalid, notFound } from '../../http/errors.ts';
import { randomToken, sha256hex } from '../../http/secrets.ts';
import { locationsOfOrganization } from './people-admin-store.ts';
import type { Acting, PeopleAdminDeps } from './people-admin.ts';
import { checkNotFileManaged, checkOrganization, forbidden, oneLocation, scopeOf, unknownLocation } from '../../admin/rules.ts';
import type { NewToken } from './schemas.ts';
import {
  insertAccount,
  insertToken,
  listVisibleAccounts,
  revokeToken,
  touchAccount,
  visibleAccount,
  type AccountRow,
  type TokenRow,
} from './service-account-store.ts';
import { storedTokenName, tokenName } from './views.ts';

export async function listServiceAccounts(deps: PeopleAdminDeps, actor: OrganizationActor): Promise<AccountRow[]> {
  return listVisibleAccounts(deps.db, scopeOf(actor));
}

type Target = { type: string; id: number; name: string };

function audit(q: Queryable, acting: Acting, organizationId: number, now: Date) {
  return (action: string, target: Target, changes: AuditChanges, locationId: number | null = null) =>
    writeAudit(q, { actor: auditActorOf(acting.actor), action, target, organizationId, locationId, changes, origin: acting.origin }, now);
}

export async function createServiceAccount(
  deps: PeopleAdminDeps,
  acting: Acting,
  body: { name: string; organization_id?: number | undefined },
): Promise<AccountRow> {
  const scope = scopeOf(acting.actor);
  checkOrganization(scope, body.organization_id);
  const name = body.name.trim();
  if (name === '') throw invalid('name', 'must not be blank');
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const account = await insertAccount(q, scope.organizationId, name, now);
    if (account === undefined) throw new AppError(409, 'name_taken', `the organization has a service account named "${name}" already`);
    await audit(
      q,
      acting,
      scope.organizationId,
      now,
    )('service_account.created', { type: 'service_account', id: account.id, name }, { name: { from: null, to: name } });
    return account;
  });
}

/** A new token of the account: its value, shown once, and its row. */
export async function createServiceAccountToken(
  deps: PeopleAdminDeps,
  acting: Acting,
  accountId: number,
  body: NewToken,
): Promise<{ token: string; row: TokenRow }> {
  const scope = scopeOf(acting.actor);
  const name = body.name.trim();
  if (name === '') throw invalid('name', 'must not be blank');
  const now = deps.clock.now();
  const expiresAt = body.expires_at ?? null;
  if (expiresAt !== null && !(Date.parse(expiresAt) > now.getTime())) throw invalid('expires_at', 'must be in the future');
  const locationIds = body.location_ids ?? null;
  return deps.db.tx(async (q) => {
    const account = await visibleAccount(q, scope, accountId, true);
    if (account === undefined) throw notFound('service account');
    const unknown = unknownLocation(locationIds ?? [], await locationsOfOrganization(q, scope.organizationId, locationIds ?? []));
    if (unknown !== undefined) throw invalid('location_ids', `location ${unknown} not found`);
    if (scope.locationIds !== null) {
      if (locationIds === null) throw forbidden('a token you make must be limited to locations you administer (location_ids)');
      const outside = locationIds.find((id) => !scope.locationIds?.includes(id));
      if (outside !== undefined) throw forbidden(`you do not administer location ${outside}`);
    }
    // The admin scope makes its holder an administrator: of the organization when unlimited.
    if (body.scopes.includes('admin') && !mayGrant(acting.actor, locationIds === null ? 'org_admin' : 'location_admin')) {
      throw forbidden('you may not make a token that administers more than you do');
    }
    checkNotFileManaged(account.managed_by, 'this service account');
    const token = randomToken(32);
    const storedName = storedTokenName(account.id, crypto.randomBytes(6).toString('hex'), name);
    const row = await insertToken(
      q,
      { accountId: account.id, organizationId: scope.organizationId, storedName, scopes: body.scopes, locationIds, expiresAt, hash: sha256hex(token) },
      now,
    );
    await touchAccount(q, account.id, now);
    const shown = { name, scopes: row.scopes, location_ids: row.location_ids, expires_at: row.expires_at };
    await audit(q, acting, scope.organizationId, now)(
      'token.created',
      { type: 'token', id: row.id, name: `${account.name}: ${name}` },
      { ...changesBetween(null, shown), token: { from: null, to: SECRET_CHANGE } },
      oneLocation(row.location_ids),
    );
    return { token, row };
  });
}

/** Revokes a token of the account; revoking it again answers it unchanged. */
export async function revokeServiceAccountToken(deps: PeopleAdminDeps, acting: Acting, accountId: number, tokenId: number): Promise<TokenRow> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const account = await visibleAccount(q, scope, accountId, true);
    const token = account?.tokens.find((t) => t.id === tokenId);
    if (account === undefined || token === undefined) throw notFound('token');
    if (token.revoked_at !== null) return token;
    const { name, managedBy } = tokenName(token);
    checkNotFileManaged(managedBy, 'this token');
    const row = await revokeToken(q, token.id, now);
    q.signal('credentials');
    await touchAccount(q, account.id, now);
    await audit(q, acting, scope.organizationId, now)(
      'token.revoked',
      { type: 'token', id: token.id, name: `${account.name}: ${name}` },
      { revoked_at: { from: null, to: row.revoked_at } },
      oneLocation(row.location_ids),
    );
    return row;
  });
}
