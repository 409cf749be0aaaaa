// Sessions' SQL (this file is the one writer of `sessions`). A session is found by the SHA-256 of
// its cookie value with everything it relies on: its person active, a membership left (on a store
// device: one at the device's location), the device not revoked. Losing any of them ends it at its
// next request, on every instance, since nothing of it is kept in memory.
import type { Queryable, Tx } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';
import type { Role } from '../access/actor.ts';

export type SignInMethod = 'password' | 'sso' | 'pin' | 'badge';

export interface SessionRow {
  id: number;
  person_id: number;
  organization_id: number;
  name: string;
  email: string;
  must_change_password: boolean;
  method: SignInMethod;
  store_device_id: number | null;
  device_location_id: number | null;
  /** The person's grants: one row per role and location (null: the whole organization). */
  grants: { role: Role; location_id: number | null }[];
}

export function insertSession(s: { hash: string; personId: number; storeDeviceId: number | null; method: SignInMethod; maxSeconds: number }, now: Date): Sql {
  return sql`INSERT INTO sessions (session_hash, person_id, store_device_id, method, created_at, last_seen_at, expires_at)
    VALUES (${s.hash}, ${s.personId}, ${s.storeDeviceId}, ${s.method}, ${now}, ${now}, ${now}::timestamptz + ${s.maxSeconds} * interval '1 second')
    RETURNING id`;
}

/**
 * The live session with this digest. When the request is a person's (`activity`), its last-seen
 * time moves to now, but only once it is `touchEverySeconds` old: a page that reads five times a
 * second writes once a minute at most.
 */
export async function findSession(
  q: Tx,
  hash: string,
  now: Date,
  opts: { idleSeconds: number; activity: boolean; touchEverySeconds: number },
): Promise<SessionRow | undefined> {
  const [row] = await q.run<SessionRow>(sql`
    WITH live AS (
      SELECT s.id, s.person_id, p.organization_id, p.name, p.email, p.must_change_password, s.method, s.store_device_id,
        d.location_id AS device_location_id, s.last_seen_at,
        (SELECT coalesce(json_agg(json_build_object('role', m.role, 'location_id', m.location_id) ORDER BY m.role, m.location_id), '[]')
           FROM memberships m
          WHERE m.person_id = p.id AND (d.id IS NULL OR m.location_id IS NULL OR m.location_id = d.location_id)) AS grants
      FROM sessions s
      JOIN people p ON p.id = s.person_id
      LEFT JOIN store_devices d ON d.id = s.store_device_id
      WHERE s.session_hash = ${hash} AND s.ended_at IS NULL AND s.expires_at > ${now}
        AND s.last_seen_at > ${now}::timestamptz - ${opts.idleSeconds} * interval '1 second'
        AND p.status = 'active' AND (s.store_device_id IS NULL OR d.revoked_at IS NULL)
    ), touched AS (
      UPDATE sessions s SET last_seen_at = ${now} FROM live
      WHERE ${opts.activity} AND s.id = live.id AND s.last_seen_at <= ${now}::timestamptz - ${opts.touchEverySeconds} * interval '1 second'
      RETURNING s.id
    )
    SELECT * FROM live WHERE json_array_length(grants) > 0`);
  return row;
}

/** Forgets up to `limit` sessions that have ended, expired or gone idle (a sign-in tidies up after others). */
export function deleteDeadSessions(now: Date, idleSeconds: number, limit: number): Sql {
  return sql`DELETE FROM sessions WHERE id IN (
    SELECT id FROM sessions
    WHERE last_seen_at <= ${now}::timestamptz - ${idleSeconds} * interval '1 second' OR expires_at <= ${now} OR ended_at IS NOT NULL
    LIMIT ${limit})`;
}

export async function endSession(q: Queryable, hash: string, now: Date): Promise<{ id: number; person_id: number } | undefined> {
  const [row] = await q.run<{ id: number; person_id: number }>(
    sql`UPDATE sessions SET ended_at = ${now} WHERE session_hash = ${hash} AND ended_at IS NULL RETURNING id, person_id`,
  );
  return row;
}

/** Ends every live session of a person (but `except`, the one that asked); the ids it ended. */
export async function endPersonSessions(q: Queryable, personId: number, now: Date, except: number | null = null): Promise<number[]> {
  const rows = await q.run<{ id: number }>(
    sql`UPDATE sessions SET ended_at = ${now} WHERE person_id = ${personId} AND ended_at IS NULL AND id IS DISTINCT FROM ${except} RETURNING id`,
  );
  return rows.map((r) => r.id);
}

/** Ends the live shift sessions of a store device (it was revoked); the sessions it ended, with whose they were. */
export function endDeviceSessions(q: Queryable, storeDeviceId: number, now: Date): Promise<{ id: number; person_id: number; name: string }[]> {
  return q.run(sql`
    WITH ended AS (
      UPDATE sessions SET ended_at = ${now}
      WHERE store_device_id = ${storeDeviceId} AND ended_at IS NULL AND expires_at > ${now}
      RETURNING id, person_id)
    SELECT ended.id, ended.person_id, p.name FROM ended JOIN people p ON p.id = ended.person_id ORDER BY ended.id`);
}
