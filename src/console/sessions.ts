// Signing in to the console and the session that follows (contract section 15). The cookie value
// is 256 random bits, stored only as its SHA-256; the CSRF token is derived from it (HMAC), so it
// needs no storage and is only ever known to a page that can read the session's own answers.
import crypto from 'node:crypto';
import type { ConsoleSessionActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { AppError } from '../http/errors.ts';
import { matchesDigest, randomToken, safeEqual, sha256hex } from '../http/secrets.ts';
import { deleteDeadSessions, endSession, findSession, insertSession, liveToken } from './session-store.ts';

/** Idle time after which a session ends (12 hours): idle meaning no person did anything. */
export const SESSION_IDLE_SECONDS = 12 * 60 * 60;

/** A person's request moves the session's last-seen time at most this often: a session ends at most
 * this much sooner than 12 hours after its very last request, and a busy page writes once a minute. */
export const SESSION_TOUCH_SECONDS = 60;

/** Dead sessions a sign-in deletes: more than sessions can die between two sign-ins of a store. */
const DEAD_SESSIONS_PER_SIGN_IN = 20;

export interface SessionDeps {
  db: Pick<Db, 'tx' | 'statement'>;
  clock: Clock;
}

const refused = () => new AppError(401, 'unauthorized', 'the token is not valid for the console');

/** A new session for a live token with the console scope; returns the cookie value. */
export async function signIn(deps: SessionDeps, token: string, staffName: string): Promise<string> {
  const now = deps.clock.now();
  if (token === '' || token.length > 512) throw refused();
  const found = await deps.db.statement((q) => liveToken(q, sha256hex(token), now));
  if (found === undefined || !matchesDigest(token, found.token_hash)) throw refused();
  if (!found.scopes.includes('console')) throw new AppError(403, 'insufficient_scope', 'the token lacks the "console" scope');
  const session = randomToken(32);
  await deps.db.tx(async (q) => {
    await insertSession(q, { hash: sha256hex(session), tokenId: found.id, organizationId: found.organization_id, staffName }, now);
    // Ended and idle sessions are of no use; each sign-in forgets a few, so they never pile up.
    await deleteDeadSessions(q, now, SESSION_IDLE_SECONDS, DEAD_SESSIONS_PER_SIGN_IN);
  });
  return session;
}

/**
 * The actor of a live session (the token that signed in, with its organization and location
 * limit), or null. `activity`: the request is something a person did (not
 * a page reading itself again on its own, nor the live stream), so the idle time restarts.
 */
export async function resumeSession(deps: SessionDeps, session: string, activity: boolean): Promise<ConsoleSessionActor | null> {
  if (session === '' || session.length > 128) return null;
  const row = await deps.db.statement((q) =>
    findSession(q, sha256hex(session), deps.clock.now(), {
      idleSeconds: SESSION_IDLE_SECONDS,
      activity,
      touchEverySeconds: SESSION_TOUCH_SECONDS,
    }),
  );
  if (row === undefined) return null;
  return {
    kind: 'console_session',
    sessionId: row.id,
    tokenId: row.api_token_id,
    staffName: row.staff_name,
    reach: { organizationId: row.organization_id, locationIds: row.location_ids, scopes: row.scopes },
  };
}

export async function signOut(deps: SessionDeps, session: string): Promise<void> {
  if (session === '' || session.length > 128) return;
  await deps.db.statement((q) => endSession(q, sha256hex(session), deps.clock.now()));
}

/** The session's CSRF token: an HMAC of a fixed label keyed with the cookie value. */
export function csrfTokenOf(session: string): string {
  return crypto.createHmac('sha256', session).update('storeops console csrf').digest('base64url');
}

export function isValidCsrf(session: string, given: string | undefined): boolean {
  return given !== undefined && given !== '' && safeEqual(csrfTokenOf(session), given);
}
