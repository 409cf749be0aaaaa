// A person's session (contract section 17): started by a sign-in (sign-in.ts, oidc routes, store
// devices), resumed from its cookie on every request as the request's actor, ended by signing out,
// by an administrator, or by losing what it relied on. The CSRF token is derived from the cookie
// value (HMAC), so it needs no storage and is only known to a page that can read the session's answers.
import crypto from 'node:crypto';
import { reachOfMemberships, ROLES, type Membership, type PersonActor, type Role } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { randomToken, safeEqual, sha256hex } from '../http/secrets.ts';
import { SESSION_MAX_SECONDS, SHIFT_MAX_SECONDS } from './cookies.ts';
import { deleteDeadSessions, endSession, findSession, insertSession, type SessionRow, type SignInMethod } from './session-store.ts';

/** Idle time after which a session ends (12 hours): idle meaning no person did anything. */
export const SESSION_IDLE_SECONDS = 12 * 60 * 60;

/** A person's request moves the session's last-seen time at most this often: a session ends at most
 * this much sooner than 12 hours after its very last request, and a busy page writes once a minute. */
export const SESSION_TOUCH_SECONDS = 60;

/** Dead sessions a sign-in deletes: more than sessions can die between two sign-ins. */
const DEAD_SESSIONS_PER_SIGN_IN = 20;

export interface SessionDeps {
  db: Pick<Db, 'tx' | 'statement'>;
  clock: Clock;
}

/** A new session in the sign-in's transaction; returns the cookie value (shown to the browser only). */
export async function startSession(q: Tx, s: { personId: number; method: SignInMethod; storeDeviceId: number | null }, now: Date): Promise<string> {
  const value = randomToken(32);
  const maxSeconds = s.storeDeviceId === null ? SESSION_MAX_SECONDS : SHIFT_MAX_SECONDS;
  await q.run(insertSession({ hash: sha256hex(value), personId: s.personId, storeDeviceId: s.storeDeviceId, method: s.method, maxSeconds }, now));
  // Ended and idle sessions are of no use; each sign-in forgets a few, so they never pile up.
  await q.run(deleteDeadSessions(now, SESSION_IDLE_SECONDS, DEAD_SESSIONS_PER_SIGN_IN));
  return value;
}

/** Grants (a role at a location, or org-wide) as memberships: one per role, its locations together. */
export function membershipsOf(grants: readonly { role: Role; location_id: number | null }[]): Membership[] {
  const memberships: Membership[] = [];
  for (const role of ROLES) {
    const mine = grants.filter((g) => g.role === role);
    if (mine.length === 0) continue;
    const whole = mine.some((g) => g.location_id === null);
    memberships.push({ role, locationIds: whole ? null : [...new Set(mine.map((g) => g.location_id as number))].sort((a, b) => a - b) });
  }
  return memberships;
}

function actorOfRow(row: SessionRow): PersonActor {
  let memberships = membershipsOf(row.grants);
  // On a store device a person works at the device's location only, whatever else they hold.
  if (row.device_location_id !== null) memberships = memberships.map((m) => ({ role: m.role, locationIds: [row.device_location_id as number] }));
  return {
    kind: 'person',
    personId: row.person_id,
    name: row.name,
    email: row.email,
    sessionId: row.id,
    storeDeviceId: row.store_device_id,
    memberships,
    // A one-time password binds the sessions it signed in, not a single sign-on's or a shift's.
    mustChangePassword: row.must_change_password && row.method === 'password',
    reach: { organizationId: row.organization_id, locationIds: reachOfMemberships(memberships), scopes: [] },
  };
}

/**
 * The person of a live session, or null. `activity`: the request is something a person did (not a
 * page reading itself again on its own, nor a live stream), so the idle time restarts.
 */
export async function resumeSession(deps: SessionDeps, value: string, activity: boolean): Promise<PersonActor | null> {
  if (value === '' || value.length > 128) return null;
  const row = await deps.db.statement((q) =>
    findSession(q, sha256hex(value), deps.clock.now(), { idleSeconds: SESSION_IDLE_SECONDS, activity, touchEverySeconds: SESSION_TOUCH_SECONDS }),
  );
  return row === undefined ? null : actorOfRow(row);
}

/** Ends the session with this cookie value; the ended session's id and person, if it was live. */
export async function endSessionByValue(q: Tx, value: string, now: Date): Promise<{ id: number; person_id: number } | undefined> {
  if (value === '' || value.length > 128) return undefined;
  return endSession(q, sha256hex(value), now);
}

/** The session's CSRF token: an HMAC of a fixed label keyed with the cookie value. */
export function csrfTokenOf(session: string): string {
  return crypto.createHmac('sha256', session).update('storeops session csrf').digest('base64url');
}

export function isValidCsrf(session: string, given: string | undefined): boolean {
  return given !== undefined && given !== '' && safeEqual(csrfTokenOf(session), given);
}
