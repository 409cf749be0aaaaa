// The console's session SQL: a session is found by the SHA-256 of its cookie value, together with
// its token, which must still be live and keep the console scope for the session to count.
import type { Queryable, Tx } from '../db/db.ts';

export interface SessionRow {
  id: number;
  api_token_id: number;
  organization_id: number;
  scopes: string[];
  /** The token's location limit (null: every location of its organization). */
  location_ids: number[] | null;
  staff_name: string;
  last_seen_at: string;
}

export interface TokenRow {
  id: number;
  organization_id: number;
  scopes: string[];
  token_hash: string;
}

/** A live token by digest (revoked or expired ones are not found). */
export async function liveToken(q: Queryable, digest: string, now: Date): Promise<TokenRow | undefined> {
  const [row] = await q.query<TokenRow>(
    `SELECT id, organization_id, scopes, token_hash FROM api_tokens
     WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
    [digest, now],
  );
  return row;
}

export async function insertSession(q: Tx, s: { hash: string; tokenId: number; organizationId: number; staffName: string }, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO console_sessions (session_hash, api_token_id, organization_id, staff_name, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $5)`,
    [s.hash, s.tokenId, s.organizationId, s.staffName, now],
  );
}

/**
 * The live session with this digest (not ended, seen within the idle limit, its token live and of
 * the console scope). When the request is a person's (`activity`), its last-seen time moves to now,
 * but only once it is `touchEverySeconds` old: a page that reads five times a second writes nothing
 * more than once a minute, and a read that finds the session fresh writes nothing at all.
 */
export async function findSession(
  q: Tx,
  hash: string,
  now: Date,
  opts: { idleSeconds: number; activity: boolean; touchEverySeconds: number },
): Promise<SessionRow | undefined> {
  const [row] = await q.query<SessionRow>(
    `WITH live AS (
       SELECT s.id, s.api_token_id, s.organization_id, t.scopes, t.location_ids, s.staff_name, s.last_seen_at
       FROM console_sessions s JOIN api_tokens t ON t.id = s.api_token_id
       WHERE s.session_hash = $1 AND s.ended_at IS NULL AND s.last_seen_at > $2::timestamptz - $3 * interval '1 second'
         AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2) AND 'console' = ANY (t.scopes)
     ), touched AS (
       UPDATE console_sessions s SET last_seen_at = $2 FROM live
       WHERE $4 AND s.id = live.id AND s.last_seen_at <= $2::timestamptz - $5 * interval '1 second'
       RETURNING s.id
     )
     SELECT * FROM live`,
    [hash, now, opts.idleSeconds, opts.activity, opts.touchEverySeconds],
  );
  return row;
}

/** Forgets up to `limit` sessions that have ended or gone idle (a sign-in tidies up after others). */
export async function deleteDeadSessions(q: Tx, now: Date, idleSeconds: number, limit: number): Promise<void> {
  await q.query(
    `DELETE FROM console_sessions WHERE id IN (
       SELECT id FROM console_sessions WHERE last_seen_at <= $1::timestamptz - $2 * interval '1 second' OR ended_at IS NOT NULL LIMIT $3)`,
    [now, idleSeconds, limit],
  );
}

export async function endSession(q: Tx, hash: string, now: Date): Promise<void> {
  await q.query(`UPDATE console_sessions SET ended_at = $2 WHERE session_hash = $1 AND ended_at IS NULL`, [hash, now]);
}
