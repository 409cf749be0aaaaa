// Section 18's messaging accounts: listMessagingAccounts, createMessagingAccount,
// updateMessagingAccount and deleteMessagingAccount. An account is the organization's (its edge
// devices' messages are signed with its auth token, R2), so only organization administrators manage
// it. The auth token is the provider's (it signs with it): given, never made, never shown. Read at
// each R2, so a change or a disabled account applies to the next message on every instance.
import type { OrganizationActor } from '../../access/actor.ts';
import { checkNotFileManaged, checkOrganization, forbidden, isOrganizationWide, scopeOf, type AdminScope } from '../../admin/rules.ts';
import { auditActorOf, SECRET_CHANGE, writeAudit, type AuditChanges } from '../../audit/record.ts';
import type { Queryable } from '../../db/db.ts';
import { AppError, notFound } from '../../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../../http/if-match.ts';
import { accountHasHistory, accountOfOrganization, deleteAccount, insertAccount, listAccounts, updateAccount, type AccountRow } from './edge-store.ts';
import type { Acting, RadioAdminDeps } from './edges.ts';
import type { MessagingAccountChange, NewMessagingAccount } from './schemas.ts';

function organizationAdmin(actor: OrganizationActor): AdminScope {
  const scope = scopeOf(actor);
  if (!isOrganizationWide(scope)) throw forbidden("messaging accounts are the organization's: for its administrators");
  return scope;
}

function audit(q: Queryable, acting: Acting, now: Date) {
  return (action: string, row: AccountRow, changes: AuditChanges) =>
    writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action,
        target: { type: 'messaging_account', id: row.account_sid, name: row.account_sid },
        organizationId: row.organization_id,
        locationId: null,
        changes,
        origin: acting.origin,
      },
      now,
    );
}

export async function listMessagingAccounts(deps: RadioAdminDeps, actor: OrganizationActor): Promise<AccountRow[]> {
  return listAccounts(deps.db, organizationAdmin(actor).organizationId);
}

export async function createMessagingAccount(deps: RadioAdminDeps, acting: Acting, body: NewMessagingAccount): Promise<AccountRow> {
  const scope = organizationAdmin(acting.actor);
  checkOrganization(scope, body.organization_id);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const row = await insertAccount(q, body.account_sid, scope.organizationId, body.auth_token, body.enabled ?? true, now);
    if (row === undefined) throw new AppError(409, 'id_taken', 'this account is set up already');
    await audit(q, acting, now)('messaging_account.created', row, {
      enabled: { from: null, to: row.enabled },
      auth_token: { from: null, to: SECRET_CHANGE },
    });
    return row;
  });
}

export async function updateMessagingAccount(
  deps: RadioAdminDeps,
  acting: Acting,
  sid: string,
  body: MessagingAccountChange,
  expected: ExpectedVersions,
): Promise<AccountRow> {
  const scope = organizationAdmin(acting.actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const before = await accountOfOrganization(q, scope.organizationId, sid, true);
    if (before === undefined) throw notFound('messaging account');
    checkNotFileManaged(before.managed_by, 'this messaging account');
    checkVersion(expected, before.version);
    const row = await updateAccount(q, sid, body.auth_token, body.enabled ?? before.enabled, now);
    const changes: AuditChanges = {};
    if (row.enabled !== before.enabled) changes.enabled = { from: before.enabled, to: row.enabled };
    if (body.auth_token !== undefined) changes.auth_token = { from: SECRET_CHANGE, to: SECRET_CHANGE };
    await audit(q, acting, now)('messaging_account.updated', row, changes);
    return row;
  });
}

/** Deletes an account no message came through; one with messages is retired (enabled: false). */
export async function deleteMessagingAccount(deps: RadioAdminDeps, acting: Acting, sid: string, expected: ExpectedVersions): Promise<void> {
  const scope = organizationAdmin(acting.actor);
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    const row = await accountOfOrganization(q, scope.organizationId, sid, true);
    if (row === undefined) throw notFound('messaging account');
    checkNotFileManaged(row.managed_by, 'this messaging account');
    checkVersion(expected, row.version);
    if (await accountHasHistory(q, sid)) throw new AppError(409, 'in_use', 'messages came through this account: retire it with enabled: false instead');
    await deleteAccount(q, sid);
    await audit(q, acting, now)('messaging_account.deleted', row, { enabled: { from: row.enabled, to: null } });
  });
}
