// SQL of retention: each function deletes one small batch in one statement (its own short
// transaction) and says how many rows went. Rows another instance is deleting are skipped (SKIP
// LOCKED), so instances running retention at once share the work instead of waiting on each other.
import type { Queryable } from '../db/db.ts';
import { deleteAuditEntriesBefore } from '../audit/store.ts';
import { sql, type Sql } from '../db/sql.ts';
import { deleteJobsDoneBefore } from '../jobs/queue.ts';
import { deleteDeadSessions as deadSessions } from '../people/session-store.ts';
import { SESSION_IDLE_SECONDS } from '../people/sessions.ts';
import { deleteOldFailures } from '../people/throttle.ts';

const counted = async (q: Queryable, sql: string, params: unknown[]): Promise<number> => {
  const [row] = await q.query<{ n: number }>(`WITH d AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM d`, params);
  return row?.n ?? 0;
};

/**
 * Announcement audio stored before the cutoff (index radio_audio_created): a play lives for
 * RADIO_MESSAGE_TTL_SECONDS, so audio older than the window was played or expired long ago. Outbox
 * rows still pointing at it lose the reference (ON DELETE SET NULL); the message and its
 * transcript text stay.
 */
export const deleteOldAudio = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM radio_audio WHERE message_id IN (
     SELECT message_id FROM radio_audio WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [cutoff, limit],
  );

/**
 * Settled webhook deliveries (and their attempts, by cascade) created before the cutoff. They are
 * looked for among the oldest deliveries only (the primary key's head), so a batch never reads the
 * whole table; retries stop after 24 hours, so an old one is never pending for long.
 */
export const deleteOldDeliveries = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM webhook_deliveries WHERE id IN (
     SELECT id FROM (SELECT id, created_at, state FROM webhook_deliveries ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS d
     WHERE d.created_at < $1 AND d.state <> 'pending')`,
    [cutoff, limit],
  );

/**
 * Events written before the cutoff that every durable subscriber has read (its cursor is past
 * them), among the oldest ones; their deliveries go with them (ON DELETE CASCADE).
 */
export const deleteOldEvents = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM events WHERE id IN (
     SELECT id FROM (SELECT id, tx_id, created_at FROM events ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS e
     WHERE e.created_at < $1 AND NOT EXISTS (SELECT 1 FROM event_cursors c WHERE (c.tx_id, c.event_id) < (e.tx_id, e.id)))`,
    [cutoff, limit],
  );

/** Jobs that ran, failed for good or were called off before the cutoff (jobs/queue.ts): pending
 * jobs, however old, stay. */
export const deleteFinishedJobs = (q: Queryable, cutoff: Date, limit: number): Promise<number> => countedSql(q, deleteJobsDoneBefore(cutoff, limit));

/** A DELETE fragment of the table's owner, run, with how many rows it deleted. */
async function countedSql(q: Queryable, deletion: Sql): Promise<number> {
  const [row] = await q.run<{ n: number }>(sql`WITH d AS (${deletion} RETURNING 1) SELECT count(*)::int AS n FROM d`);
  return row?.n ?? 0;
}

/** Audit entries written before the cutoff (AUDIT_RETENTION_DAYS), the oldest first. */
export const deleteOldAuditEntries = (q: Queryable, cutoff: Date, limit: number): Promise<number> => countedSql(q, deleteAuditEntriesBefore(cutoff, limit));

/** Failed sign-ins counted before the cutoff: long past any throttle's window. */
export const deleteOldSignInFailures = (q: Queryable, cutoff: Date, limit: number): Promise<number> => countedSql(q, deleteOldFailures(cutoff, limit));

/** Sessions that have ended, expired or gone idle by now: nothing can resume them. */
export const deleteDeadSessions = (q: Queryable, now: Date, limit: number): Promise<number> => countedSql(q, deadSessions(now, SESSION_IDLE_SECONDS, limit));

/** Speech heard on the radio (R3) received before the cutoff, among the oldest ones (the primary
 * key's head): its transcripts are kept for the retention period, as the played ones are. */
export const deleteOldHeard = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM radio_heard WHERE id IN (
     SELECT id FROM (SELECT id, received_at FROM radio_heard ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS h
     WHERE h.received_at < $1)`,
    [cutoff, limit],
  );

/**
 * Voice actions' view of open requests (radio_open_requests) opened before the cutoff: a request
 * leaves it when it closes, and every request closes long before the window (timeout, automatic
 * completion), so what is left that old is a request whose closing event the view missed; it is
 * never claimable by voice again (index radio_open_requests_opened, migration 022).
 */
export const deleteStaleOpenRequests = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM radio_open_requests WHERE request_id IN (
     SELECT request_id FROM radio_open_requests WHERE opened_at < $1 ORDER BY opened_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [cutoff, limit],
  );

/** Displays' last accepted press per client (a browser, or an address without one; C9's limits)
 * older than the cutoff: a cooldown lasts minutes, so they decide nothing any more (index cfh_display_presses_last_at,
 * migration 022). */
export const deleteOldDisplayPresses = (q: Queryable, cutoff: Date, limit: number) =>
  counted(
    q,
    `DELETE FROM cfh_display_presses WHERE (display_id, client) IN (
     SELECT display_id, client FROM cfh_display_presses WHERE last_at < $1 ORDER BY last_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [cutoff, limit],
  );
