// SQL of a request's timers (contract section 10), each run in its job's transaction. Each is a
// conditional update: a claim, completion or cancel that committed first makes it change nothing,
// and one that comes while it runs waits on the row and then finds the request as it left it.
// Times are the job's due time, so a late run (every instance was down) stamps what a punctual one would.
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsFrom } from '../events/log.ts';
import type { ReminderPhase, ReminderState } from './rules.ts';
import { CFH_REMINDER_JOB, CHANGED, endAllTimers, eventsOf, timerKey } from './sql.ts';

/**
 * Timeout: a request still open and unclaimed gets is_timeout and is closed (status timed_out): it
 * is archived and no longer claimable. A claimed request does not time out.
 */
export async function markTimedOut(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_timeout = true, timeout_at = $2, is_closed = true, closed_at = $2, updated_at = greatest(updated_at, $2::timestamptz)
       WHERE id = $1 AND NOT is_claimed AND NOT is_closed
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at) SELECT id, 'timed_out', $2 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'timed_out'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz' }))}
     ), ended AS (${endAllTimers('$2::timestamptz')})
     SELECT id FROM r`,
    [requestId, due, lead],
  );
  return rows.length > 0;
}

/** Escalation: a request still open and unclaimed becomes escalated; it stays open and claimable. */
export async function markEscalated(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_escalated = true, escalated_at = $2, updated_at = greatest(updated_at, $2::timestamptz)
       WHERE id = $1 AND NOT is_claimed AND NOT is_closed AND NOT is_escalated
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at) SELECT id, 'escalated', $2 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'escalated'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz' }))}
     )
     SELECT id FROM r`,
    [requestId, due, lead],
  );
  return rows.length > 0;
}

/** Automatic completion: a claimed request still open is completed with reason no_associate_feedback. */
export async function autoComplete(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_completed = true, completed_at = $2, completion_reason = 'no_associate_feedback', is_closed = true, closed_at = $2,
         updated_at = greatest(updated_at, $2::timestamptz)
       WHERE id = $1 AND is_claimed AND NOT is_closed
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, 'completed', $2, 'no_associate_feedback' FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'completed'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz' }))}
     ), ended AS (${endAllTimers('$2::timestamptz')})
     SELECT id FROM r`,
    [requestId, due, lead],
  );
  return rows.length > 0;
}

/** A reminder's decision needs the request and its location's settings, locked until it is written. */
export async function lockForReminder(q: Queryable, requestId: number): Promise<ReminderState | null> {
  const [row] = await q.query<ReminderState>(
    `SELECT r.is_closed, r.is_claimed, r.is_on_the_way, r.created_at, r.claimed_at,
       coalesce(l.cfh_reminder_seconds, 0) AS reminder_seconds, coalesce(l.cfh_reminder_claimed_seconds, 0) AS claimed_seconds,
       coalesce(l.cfh_reminder_cap_seconds, 0) AS cap_seconds
     FROM cfh_requests r JOIN locations l ON l.id = r.location_id WHERE r.id = $1 FOR UPDATE OF r`,
    [requestId],
  );
  return row ?? null;
}

/** A reminder: the count goes up, a step and an event (with the count) are written, the next one is asked for. */
export async function writeReminder(
  q: Tx, requestId: number, phase: ReminderPhase, n: number, due: string, next: Date | null, lead: string,
): Promise<void> {
  await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET reminder_count = reminder_count + 1 WHERE id = $1 RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, 'reminder', $2, reminder_count::text FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'reminder'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz', reminderCount: 'r.reminder_count' }))}
     ), next AS (
       INSERT INTO jobs (kind, payload, run_at, dedupe_key)
       SELECT '${CFH_REMINDER_JOB}', jsonb_build_object('request_id', r.id, 'phase', $4::text, 'n', $5::int), $6::timestamptz,
         ${timerKey('r.id', "reminder:' || $4::text || ':' || $5::int || '")}
       FROM r WHERE $6::timestamptz IS NOT NULL
       ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO NOTHING
     )
     SELECT id FROM r`,
    [requestId, due, lead, phase, n + 1, next],
  );
}
