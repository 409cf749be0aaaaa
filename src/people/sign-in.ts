// Signing in with a password, changing it, and signing out (contract section 17). Every sign-in,
// failed or not, and every ending is an audit entry written with the change it records.
import type { PersonActor } from '../access/actor.ts';
import { personAuditActor, unknownPerson, writeAudit, SECRET_CHANGE, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { AppError, invalid } from '../http/errors.ts';
import { hashSecret, passwordProblem, SECRET_MAX_LENGTH, verifySecret, type Hasher } from './passwords.ts';
import { personByEmail, personById, setPassword, type PersonRow } from './people-store.ts';
import { endPersonSessions } from './session-store.ts';
import { endSessionByValue, startSession } from './sessions.ts';
import { attempt, PASSWORD_THROTTLE } from './throttle.ts';

/** PASSWORD_SIGN_IN: who may sign in with a password. */
export type PasswordSignIn = 'on' | 'admins' | 'off';

export interface SignInDeps {
  db: Db;
  clock: Clock;
  passwordSignIn: PasswordSignIn;
  /** Where passwords are hashed (the service's low-priority worker). */
  hasher: Hasher;
}

export interface SignedIn {
  /** The new session's cookie value. */
  session: string;
  personId: number;
}

const wrong = () => new AppError(401, 'unauthorized', 'the email or password is not right');

/** Whether the mode lets this person use a password: `admins` lets org_admins only (the way in while
 * the identity provider is down). */
function passwordAllowed(mode: PasswordSignIn, person: PersonRow): boolean {
  if (mode === 'off') return false;
  return mode === 'on' || person.grants.some((g) => g.role === 'org_admin');
}

export async function signInWithPassword(deps: SignInDeps, email: string, password: string, origin: AuditOrigin): Promise<SignedIn> {
  const now = deps.clock.now();
  if (deps.passwordSignIn === 'off') throw new AppError(403, 'forbidden', 'password sign-in is turned off here; use single sign-on');
  const person = await personByEmail(deps.db, email.trim());
  const right = await attempt(
    deps.db,
    PASSWORD_THROTTLE,
    email.trim().toLowerCase(),
    now,
    async () => password.length <= SECRET_MAX_LENGTH && (await verifySecret(password, person?.password_hash ?? null, deps.hasher)),
  );
  const usable = person !== undefined && right && person.status === 'active' && person.grants.length > 0;
  if (!usable || !passwordAllowed(deps.passwordSignIn, person)) {
    const reason = !right
      ? 'wrong password'
      : person?.status === 'disabled'
        ? 'disabled'
        : person?.grants.length === 0
          ? 'no role'
          : 'password sign-in not allowed';
    await deps.db.statement((q) =>
      writeAudit(
        q,
        {
          actor: person === undefined ? unknownPerson : personAuditActor(person),
          action: 'sign_in.failed',
          target: null,
          organizationId: person?.organization_id ?? null,
          changes: { method: { from: null, to: 'password' }, reason: { from: null, to: reason } },
          origin,
        },
        now,
      ),
    );
    if (usable) throw new AppError(403, 'forbidden', 'password sign-in is for organization administrators here; use single sign-on');
    throw wrong();
  }
  const session = await deps.db.tx(async (q) => {
    const value = await startSession(q, { personId: person.id, method: 'password', storeDeviceId: null }, now);
    await writeAudit(
      q,
      {
        actor: personAuditActor(person),
        action: 'sign_in.succeeded',
        target: null,
        organizationId: person.organization_id,
        changes: { method: { from: null, to: 'password' } },
        origin,
      },
      now,
    );
    return value;
  });
  return { session, personId: person.id };
}

/** changePassword: the current password, then a new one of 12 characters or more. Other sessions of
 * the person end (whoever knew the old password is signed out); this one stays. */
export async function changePassword(deps: SignInDeps, person: PersonActor, current: string, next: string, origin: AuditOrigin): Promise<void> {
  const now = deps.clock.now();
  const problem = passwordProblem(next);
  if (problem !== null) throw invalid('new_password', problem);
  if (next === current) throw invalid('new_password', 'must differ from the current password');
  const row = await personById(deps.db, person.personId);
  const right = await attempt(deps.db, PASSWORD_THROTTLE, person.email.toLowerCase(), now, async () =>
    row === undefined ? false : verifySecret(current, row.password_hash, deps.hasher),
  );
  if (!right) throw invalid('current_password', 'is not right');
  const hash = await hashSecret(next, deps.hasher);
  await deps.db.tx(async (q) => {
    await setPassword(q, person.personId, hash, false, now);
    await endPersonSessions(q, person.personId, now, person.sessionId);
    await writeAudit(
      q,
      {
        actor: personAuditActor({ id: person.personId, name: person.name }),
        action: 'person.password_changed',
        target: { type: 'person', id: person.personId, name: person.name },
        organizationId: person.reach.organizationId,
        changes: { password: { from: SECRET_CHANGE, to: SECRET_CHANGE } },
        origin,
      },
      now,
    );
  });
}

/** signOut: ends the session of this cookie value (if it is live) with its audit entry. */
export async function signOut(deps: Pick<SignInDeps, 'db' | 'clock'>, value: string, origin: AuditOrigin): Promise<void> {
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    const ended = await endSessionByValue(q, value, now);
    if (ended === undefined) return;
    const person = await personById(q, ended.person_id);
    await writeAudit(
      q,
      {
        actor: person === undefined ? unknownPerson : personAuditActor(person),
        action: 'sign_out',
        target: { type: 'session', id: ended.id },
        organizationId: person?.organization_id ?? null,
        origin,
      },
      now,
    );
  });
}
