// Section 18's people: listPeople, getPerson, createPerson, updatePerson and endPersonSessions, each
// one transaction with its rules and its audit entries. Passwords and PINs are hashed before the
// transaction opens. Sessions are read live (session-store.ts), so a disabled person or a removed
// membership stops a session at its next request; disabling and new passwords also end them.
import { locationVerdict } from '../../access/locations.ts';
import type { OrganizationActor } from '../../access/actor.ts';
import { auditActorOf, changesBetween, SECRET_CHANGE, writeAudit, type AuditChanges, type AuditOrigin } from '../../audit/record.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Queryable } from '../../db/db.ts';
import { AppError, invalid, notFound } from '../../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../../http/if-match.ts';
import { hashSecret, oneTimePassword, pinProblem, type Hasher } from '../passwords.ts';
import { endPersonSessions as endSessionsOf } from '../session-store.ts';
import { badgeDigest } from '../store-device-sign-in.ts';
import { checkedGrants } from './grants.ts';
import {
  changeAdminGrants,
  insertAdminPerson,
  listVisiblePeople,
  lockOrganization,
  otherActiveOrgAdmins,
  takenField,
  updatePersonFields,
  visiblePerson,
  type AdminPersonRow,
  type PersonFields,
  type SecretUpdate,
} from './people-admin-store.ts';
import { grantChanges, grantWithin, isActiveOrgAdmin, whyNotChangePerson, whyNotSetCredentials, type Grant } from './rules.ts';
import { checkNotFileManaged, checkOrganization, forbidden, scopeOf, type AdminScope } from '../../admin/rules.ts';
import type { NewPerson, PersonChange } from './schemas.ts';

export interface PeopleAdminDeps {
  db: Db;
  clock: Clock;
  /** Where PINs and one-time passwords are hashed (the service's low-priority worker). */
  hasher: Hasher;
}

/** Who asks, and from where (the audit entries say both). */
export interface Acting {
  actor: OrganizationActor;
  origin: AuditOrigin;
}

export interface ChangedPerson {
  person: AdminPersonRow;
  /** Made by `password: true`: for this answer only. */
  oneTimePassword: string | null;
  /** The sessions this change ended (their live streams on this instance end now). */
  endedSessions: number[];
}

export async function listPeople(deps: PeopleAdminDeps, actor: OrganizationActor, locationId: number | undefined): Promise<AdminPersonRow[]> {
  const scope = scopeOf(actor);
  if (locationId !== undefined) {
    // Out of the actor's reach: 404; a location it sees (a staff role there) but does not administer: 403.
    const verdict = await locationVerdict(deps.db, actor, locationId, 'administer');
    if (verdict === 'unknown') throw notFound('location');
    if (verdict === 'visible') throw forbidden("a location's people are for its admins");
  }
  return listVisiblePeople(deps.db, scope, locationId ?? null);
}

export async function getPerson(deps: PeopleAdminDeps, actor: OrganizationActor, id: number): Promise<AdminPersonRow> {
  const row = await visiblePerson(deps.db, scopeOf(actor), id);
  if (row === undefined) throw notFound('person');
  return row;
}

interface Secrets {
  passwordHash: SecretUpdate;
  oneTimePassword: string | null;
  pinHash: SecretUpdate;
  badgeDigest: SecretUpdate;
}

/** The secrets a body sets, checked and hashed (before any transaction: a hash takes ~30 ms). */
async function prepareSecrets(hasher: Hasher, organizationId: number, body: Pick<PersonChange, 'password' | 'pin' | 'badge_code'>): Promise<Secrets> {
  const pinIssue = body.pin == null ? null : pinProblem(body.pin);
  if (pinIssue !== null) throw invalid('pin', pinIssue);
  if (body.badge_code != null && body.badge_code.trim() === '') throw invalid('badge_code', 'must not be blank');
  const otp = body.password === true ? oneTimePassword() : null;
  const hashOf = async (value: string | null | undefined) => (value == null ? value : hashSecret(value, hasher));
  return {
    passwordHash: body.password === undefined ? undefined : await hashOf(otp),
    oneTimePassword: otp,
    pinHash: await hashOf(body.pin),
    badgeDigest: body.badge_code == null ? body.badge_code : badgeDigest(organizationId, body.badge_code),
  };
}

/** What the secrets changed, as the audit log shows it: "[secret]", never a value. */
function secretChanges(before: AdminPersonRow | null, s: Secrets): AuditChanges {
  const changes: AuditChanges = {};
  const note = (field: string, had: boolean, next: SecretUpdate, same = false) => {
    if (next === undefined || same || (next === null && !had)) return;
    changes[field] = { from: had ? SECRET_CHANGE : null, to: next === null ? null : SECRET_CHANGE };
  };
  note('password', before?.has_password ?? false, s.passwordHash);
  note('pin', before?.has_pin ?? false, s.pinHash);
  note('badge_code', (before?.badge_digest ?? null) !== null, s.badgeDigest, s.badgeDigest === (before?.badge_digest ?? null));
  return changes;
}

const shown = (f: Pick<PersonFields, 'email' | 'name' | 'status' | 'language'>) => ({ email: f.email, name: f.name, status: f.status, language: f.language });

function checkedName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (name.trim() === '') throw invalid('name', 'must not be blank');
  return name.trim();
}

/** A unique rule's refusal as the caller's 409. */
function taken(err: unknown): unknown {
  const field = takenField(err);
  if (field === 'email') return new AppError(409, 'email_taken', 'a person with this email exists already');
  if (field === 'badge_code') return new AppError(409, 'badge_taken', 'another person of the organization has this badge');
  return err;
}

async function personChange<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw taken(err);
  }
}

/** The entries of one change to a person, written in its transaction. */
function auditor(q: Queryable, acting: Acting, person: { id: number; name: string; organizationId: number }, now: Date) {
  return (action: string, changes: AuditChanges, locationId: number | null = null) =>
    writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action,
        target: { type: 'person', id: person.id, name: person.name },
        organizationId: person.organizationId,
        locationId,
        changes,
        origin: acting.origin,
      },
      now,
    );
}

async function auditGrants(audit: ReturnType<typeof auditor>, changes: { granted: readonly Grant[]; revoked: readonly Grant[] }): Promise<void> {
  for (const g of changes.granted) await audit('membership.granted', { role: { from: null, to: g.role } }, g.location_id);
  for (const g of changes.revoked) await audit('membership.revoked', { role: { from: g.role, to: null } }, g.location_id);
}

export async function createPerson(deps: PeopleAdminDeps, acting: Acting, body: NewPerson): Promise<ChangedPerson> {
  const scope = scopeOf(acting.actor);
  checkOrganization(scope, body.organization_id);
  const name = checkedName(body.name) as string;
  const noCredentials = whyNotSetCredentials(scope, body);
  if (noCredentials !== null) throw forbidden(noCredentials);
  const secrets = await prepareSecrets(deps.hasher, scope.organizationId, body);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const grants = await checkedGrants(q, acting.actor, scope, body.memberships, (i) => `memberships[${i}]`);
    const fields: PersonFields = { email: body.email, name, status: body.status ?? 'active', language: body.language ?? null, ...secrets };
    const id = await personChange(() => insertAdminPerson(q, scope.organizationId, fields, now));
    await changeAdminGrants(q, { id, organizationId: scope.organizationId }, { granted: grants, revoked: [] }, now);
    const audit = auditor(q, acting, { id, name, organizationId: scope.organizationId }, now);
    await audit('person.created', { ...changesBetween(null, shown(fields)), ...secretChanges(null, secrets) });
    await auditGrants(audit, { granted: grants, revoked: [] });
    const person = (await visiblePerson(q, scope, id)) as AdminPersonRow;
    return { person, oneTimePassword: secrets.oneTimePassword, endedSessions: [] };
  });
}

/**
 * Changes what the body names. A limited administrator changes a person as a whole only when all
 * their roles are at its locations, never an org_admin, and replaces memberships at its own
 * locations only. Nobody removes the organization's last active org_admin (409).
 */
export async function updatePerson(deps: PeopleAdminDeps, acting: Acting, id: number, body: PersonChange, expected: ExpectedVersions): Promise<ChangedPerson> {
  const scope = scopeOf(acting.actor);
  checkOrganization(scope, body.organization_id);
  const name = checkedName(body.name);
  const noCredentials = whyNotSetCredentials(scope, body);
  if (noCredentials !== null) throw forbidden(noCredentials);
  const secrets = await prepareSecrets(deps.hasher, scope.organizationId, body);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    await lockOrganization(q, scope.organizationId);
    const before = await visiblePerson(q, scope, id, true);
    if (before === undefined) throw notFound('person');
    const whole = [body.email, body.name, body.status, body.language, body.password, body.pin, body.badge_code].some((v) => v !== undefined);
    const why = whyNotChangePerson(scope, before.grants);
    if (why !== null && (whole || before.grants.some((g) => g.role === 'org_admin'))) throw forbidden(why);
    checkNotFileManaged(before.managed_by, 'this person');
    checkVersion(expected, before.version);

    const grants = body.memberships === undefined ? { granted: [], revoked: [] } : await replacedGrants(q, acting.actor, scope, before, body.memberships);
    const fields: PersonFields = {
      email: body.email ?? before.email,
      name: name ?? before.name,
      status: body.status ?? before.status,
      language: body.language === undefined ? before.language : body.language,
      ...secrets,
    };
    const { status: statusChange, ...fieldChanges } = changesBetween(shown(before), shown(fields));
    const updated = { ...fieldChanges, ...secretChanges(before, secrets) };
    if (Object.keys(updated).length === 0 && statusChange === undefined && grants.granted.length + grants.revoked.length === 0) {
      return { person: before, oneTimePassword: null, endedSessions: [] };
    }
    await personChange(() => updatePersonFields(q, id, fields, now));
    await changeAdminGrants(q, { id, organizationId: before.organization_id }, grants, now);
    await refuseLosingLastAdmin(q, before, fields.status, grants);

    const disabled = statusChange !== undefined && fields.status === 'disabled';
    const endedSessions = disabled || secrets.passwordHash !== undefined ? await endSessionsOf(q, id, now) : [];
    const audit = auditor(q, acting, { id, name: fields.name, organizationId: before.organization_id }, now);
    if (Object.keys(updated).length > 0) await audit('person.updated', updated);
    if (statusChange !== undefined) await audit(disabled ? 'person.disabled' : 'person.enabled', { status: statusChange });
    await auditGrants(audit, grants);
    if (endedSessions.length > 0) await audit('person.sessions_ended', { sessions_ended: { from: null, to: endedSessions.length } });
    // The answer shows the person even when the change took them out of a limited administrator's sight.
    const person = (await visiblePerson(q, { organizationId: before.organization_id, locationIds: null }, id)) as AdminPersonRow;
    return { person, oneTimePassword: secrets.oneTimePassword, endedSessions };
  });
}

/** What replacing the administration grants the scope administers by `memberships` grants and revokes. */
async function replacedGrants(
  q: Queryable,
  actor: OrganizationActor,
  scope: AdminScope,
  before: AdminPersonRow,
  memberships: NonNullable<PersonChange['memberships']>,
): Promise<{ granted: Grant[]; revoked: Grant[] }> {
  const desired = await checkedGrants(q, actor, scope, memberships, (i) => `memberships[${i}]`);
  const current = before.grants.filter((g) => g.granted_by === 'admin' && grantWithin(scope, g)).map((g) => ({ role: g.role, location_id: g.location_id }));
  return grantChanges(current, desired);
}

/** 409 when the change takes the organization's last active org_admin away (the organization's
 * lock, taken first, makes two such changes one after the other). */
async function refuseLosingLastAdmin(q: Queryable, before: AdminPersonRow, status: string, grants: { revoked: readonly Grant[]; granted: readonly Grant[] }) {
  const gone = (g: AdminPersonRow['grants'][number]) =>
    g.granted_by === 'admin' && grants.revoked.some((r) => r.role === g.role && r.location_id === g.location_id);
  const after: Grant[] = [...before.grants.filter((g) => !gone(g)), ...grants.granted];
  if (!isActiveOrgAdmin(before.status, before.grants) || isActiveOrgAdmin(status, after)) return;
  if ((await otherActiveOrgAdmins(q, before.organization_id, before.id)) > 0) return;
  throw new AppError(409, 'last_org_admin', 'this is the organization’s last active org_admin: make someone else org_admin first');
}

/** Ends every live session of the person (also one the file manages: this changes nothing of theirs). */
export async function endPersonSessions(deps: PeopleAdminDeps, acting: Acting, id: number): Promise<number[]> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const person = await visiblePerson(q, scope, id, true);
    if (person === undefined) throw notFound('person');
    const why = whyNotChangePerson(scope, person.grants);
    if (why !== null) throw forbidden(why);
    const ended = await endSessionsOf(q, id, now);
    const audit = auditor(q, acting, { id, name: person.name, organizationId: person.organization_id }, now);
    await audit('person.sessions_ended', { sessions_ended: { from: null, to: ended.length } });
    return ended;
  });
}
