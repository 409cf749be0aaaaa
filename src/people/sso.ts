// Single sign-on (contract section 17): startSsoSignIn keeps the flow for the browser and sends it to
// the provider; finishSsoSignIn takes the provider's answer back, finds or makes the person, grants
// what the SSO role mappings give (again at every sign-in: added and removed, an administrator's
// grants untouched) and starts their session. A refusal stores nothing but its audit entry.
import type { Role } from '../access/actor.ts';
import { personAuditActor, unknownPerson, writeAudit, type AuditEntry, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { randomToken, sha256hex } from '../http/secrets.ts';
import { OidcError, type OidcClient, type OidcIdentity } from './oidc.ts';
import { bindSubject, insertPerson, personByEmail, personBySubject, replaceGrants, type PersonRow } from './people-store.ts';
import { startSession } from './sessions.ts';
import { matchingMappings, storeFlow, takeFlow } from './sso-store.ts';

export interface SsoDeps {
  db: Db;
  clock: Clock;
  oidc: OidcClient;
}

export type SsoOutcome =
  | { kind: 'signed_in'; session: string; returnTo: string }
  /** Nothing to sign in with: no role, a disabled person, a refused answer, an expired flow. */
  | { kind: 'refused'; message: string }
  /** The provider is down or answered garbage. */
  | { kind: 'unavailable' };

/** The flow cookie's value for this browser and the provider's address to send it to. */
export async function startSso(deps: SsoDeps, returnTo: unknown): Promise<{ browser: string; url: string } | { kind: 'unavailable' }> {
  let started;
  try {
    started = await deps.oidc.start(returnTo);
  } catch (err) {
    if (err instanceof OidcError) return { kind: 'unavailable' };
    throw err;
  }
  const browser = randomToken(32);
  await deps.db.tx((q) => storeFlow(q, sha256hex(browser), started.flow, deps.clock.now()));
  return { browser, url: started.url };
}

type Grant = { role: Role; locationId: number | null };

const NO_ROLE = 'Your account has no role in this service yet. Ask an administrator to give you one, then sign in again.';

export async function finishSso(deps: SsoDeps, browser: string | null, callbackUrl: URL, origin: AuditOrigin): Promise<SsoOutcome> {
  const flow = browser === null ? undefined : await deps.db.statement((q) => takeFlow(q, sha256hex(browser), deps.clock.now()));
  if (flow === undefined) return { kind: 'refused', message: 'This sign-in has expired or was not started in this browser. Start again.' };
  let identity: OidcIdentity;
  try {
    identity = await deps.oidc.finish(callbackUrl, flow);
  } catch (err) {
    if (!(err instanceof OidcError)) throw err;
    if (err.reason === 'provider_unavailable') return { kind: 'unavailable' };
    await audit(deps, {
      actor: unknownPerson,
      action: 'sign_in.failed',
      target: null,
      organizationId: null,
      changes: reasonOf(err.reason),
      origin,
    });
    return {
      kind: 'refused',
      message:
        err.reason === 'denied' ? 'The sign-in was cancelled at the identity provider.' : "The identity provider's answer could not be accepted. Start again.",
    };
  }
  return deps.db.tx(async (q) => signInAs(q, deps.clock.now(), deps.oidc.issuer, identity, flow.returnTo, origin));
}

const reasonOf = (reason: string) => ({ method: { from: null, to: 'sso' }, reason: { from: null, to: reason } });

async function audit(deps: Pick<SsoDeps, 'db' | 'clock'>, entry: AuditEntry): Promise<void> {
  await deps.db.statement((q) => writeAudit(q, entry, deps.clock.now()));
}

/** The grants the mappings give within one organization: a role at each location, or org-wide. */
function grantsOf(mappings: Awaited<ReturnType<typeof matchingMappings>>, organizationId: number): Grant[] {
  return mappings
    .filter((m) => m.organization_id === organizationId)
    .flatMap((m): Grant[] =>
      m.role === 'org_admin' ? [{ role: m.role, locationId: null }] : (m.location_ids ?? []).map((locationId) => ({ role: m.role, locationId })),
    );
}

const TAKEN = 'This email address belongs to another account here. Ask an administrator.';

async function signInAs(q: Tx, now: Date, issuer: string, identity: OidcIdentity, returnTo: string, origin: AuditOrigin): Promise<SsoOutcome> {
  const mappings = await matchingMappings(q, identity.claimValues);
  const subject = `${issuer} ${identity.subject}`;
  const bound = await personBySubject(q, subject);
  const existing = bound ?? (await personByEmail(q, identity.email));
  const refuse = async (message: string, reason: string, person?: PersonRow) => {
    const actor = person === undefined ? { type: 'person' as const, id: null, name: identity.email.slice(0, 200) } : personAuditActor(person);
    await writeAudit(
      q,
      { actor, action: 'sign_in.failed', target: null, organizationId: person?.organization_id ?? null, changes: reasonOf(reason), origin },
      now,
    );
    return { kind: 'refused' as const, message };
  };
  let person = existing;
  if (person !== undefined && bound === undefined) {
    // Found by email only: a person another provider account signed in as, or one with a password
    // (an administrator, the break-glass one) that a provider not vouching for the address could
    // otherwise take over, is refused.
    if (person.sso_subject !== null) return refuse(TAKEN, 'email of another single sign-on identity', person);
    if (person.password_hash !== null && identity.emailVerified !== true) return refuse(TAKEN, 'email not verified by the provider', person);
  }
  if (person === undefined) {
    const organizations = [...new Set(mappings.map((m) => m.organization_id))];
    const organizationId = organizations[0];
    if (organizationId === undefined || grantsOf(mappings, organizationId).length === 0) return refuse(NO_ROLE, 'no role');
    if (organizations.length > 1) return refuse('Your groups give you roles in more than one organization. Ask an administrator.', 'ambiguous organization');
    const made = await insertPerson(
      q,
      { organizationId, email: identity.email, name: identity.name, passwordHash: null, mustChangePassword: false, managedBy: 'admin' },
      now,
    );
    if (made === undefined) return refuse('Your account was being made by another sign-in. Sign in again.', 'concurrent');
    person = {
      id: made.id,
      organization_id: organizationId,
      email: identity.email,
      name: identity.name,
      status: 'active',
      password_hash: null,
      must_change_password: false,
      sso_subject: null,
      grants: [],
    };
    await writeAudit(
      q,
      {
        actor: personAuditActor(person),
        action: 'person.created',
        target: targetOf(person),
        organizationId,
        changes: { email: { from: null, to: identity.email }, name: { from: null, to: identity.name } },
        origin,
      },
      now,
    );
  }
  if (person.status !== 'active') return refuse(NO_ROLE.replace('has no role in this service yet', 'is disabled here'), 'disabled', person);
  const granted = grantsOf(mappings, person.organization_id);
  const kept = person.grants.filter((g) => g.granted_by !== 'sso');
  if (kept.length === 0 && granted.length === 0) {
    // Roles the provider took away go now, so that the person's live sessions lose them too.
    await syncGrants(q, person, [], now, origin);
    return refuse(NO_ROLE, 'no role', person);
  }
  await syncGrants(q, person, granted, now, origin);
  await bindSubject(q, person.id, subject);
  const session = await startSession(q, { personId: person.id, method: 'sso', storeDeviceId: null }, now);
  await writeAudit(
    q,
    {
      actor: personAuditActor(person),
      action: 'sign_in.succeeded',
      target: null,
      organizationId: person.organization_id,
      changes: { method: { from: null, to: 'sso' } },
      origin,
    },
    now,
  );
  return { kind: 'signed_in', session, returnTo };
}

const targetOf = (p: Pick<PersonRow, 'id' | 'name'>) => ({ type: 'person', id: p.id, name: p.name });
const keyOf = (g: Grant) => `${g.role}@${g.locationId ?? 'organization'}`;

/** The person's SSO grants become `granted`; each one added or removed is an audit entry. */
async function syncGrants(q: Tx, person: PersonRow, granted: Grant[], now: Date, origin: AuditOrigin): Promise<void> {
  const before = new Set(person.grants.filter((g) => g.granted_by === 'sso').map((g) => keyOf({ role: g.role, locationId: g.location_id })));
  const after = new Map(granted.map((g) => [keyOf(g), g]));
  const added = [...after.keys()].filter((k) => !before.has(k));
  const removed = [...before].filter((k) => !after.has(k));
  if (added.length === 0 && removed.length === 0) return;
  await replaceGrants(q, person.id, person.organization_id, 'sso', [...after.values()], now);
  const entry = (action: string, key: string) =>
    writeAudit(
      q,
      {
        actor: personAuditActor(person),
        action,
        target: targetOf(person),
        organizationId: person.organization_id,
        changes: {
          membership: { from: action === 'membership.revoked' ? key : null, to: action === 'membership.granted' ? key : null },
          granted_by: { from: null, to: 'sso' },
        },
        origin,
      },
      now,
    );
  for (const key of added) await entry('membership.granted', key);
  for (const key of removed) await entry('membership.revoked', key);
}
