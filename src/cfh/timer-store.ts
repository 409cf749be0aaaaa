// SQL of a request's timers (contract section 10), each run in its job's transaction. Each is a
// conditional update: a claim, completion or cancel that committed first makes it change nothing,
// and one that comes while it runs waits on the row and then finds the request as it left it.
// Times are the job's due time, so a late run (every instance was down) stamps what a punctual one would.
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsFrom } from '../events/log.ts';
import { insertKeyedJobsFrom } from '../jobs/queue.ts';
import type { ReminderPhase, ReminderState } from './rules.ts';
import { CFH_REMINDER_JOB, CHANGED, endAllTimers, eventsOf, timerKey } from './sql.ts';

/**
 * One timer's conditional step: `set` applied to the request where `when` holds, then the request's
 * step (`kind`, with `detail`) and its event (status `kind`), and, for a step that closes the
 * request, every timer it still has ended. True when it changed the request.
 */
async function timerStep(
  q: Tx,
  requestId: number,
  due: string,
  lead: string,
  step: { set: string; when: string; kind: 'timed_out' | 'escalated' | 'completed'; detail?: string; closes: boolean },
): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET ${step.set}, updated_at = greatest(updated_at, $2::timestamptz)
       WHERE id = $1 AND ${step.when}
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, '${step.kind}', $2, ${step.detail === undefined ? 'NULL' : `'${step.detail}'`} FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: `'${step.kind}'`, lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz' }))}
     )${step.closes ? `, ended AS (${endAllTimers('$2::timestamptz')})` : ''}
     SELECT id FROM r`,
    [requestId, due, lead],
  );
  return rows.length > 0;
}

/**
 * Timeout: a request still open and unclaimed gets is_timeout and is closed (status timed_out): it
 * is archived and no longer claimable. A claimed request does not time out.
 */
export function markTimedOut(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: 'is_timeout = true, timeout_at = $2, is_closed = true, closed_at = $2',
    when: 'NOT is_claimed AND NOT is_closed',
    kind: 'timed_out',
    closes: true,
  });
}

/** Escalation: a request still open and unclaimed becomes escalated; it stays open and claimable. */
export function markEscalated(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: 'is_escalated = true, escalated_at = $2',
    when: 'NOT is_claimed AND NOT is_closed AND NOT is_escalated',
    kind: 'escalated',
    closes: false,
  });
}

/** Automatic completion: a claimed request still open is completed with reason no_associate_feedback. */
export function autoComplete(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: "is_completed = true, completed_at = $2, completion_reason = 'no_associate_feedback', is_closed = true, closed_at = $2",
    when: 'is_claimed AND NOT is_closed',
    kind: 'completed',
    detail: 'no_associate_feedback',
    closes: true,
  });
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
export async function writeReminder(q: Tx, requestId: number, phase: ReminderPhase, n: number, due: string, next: Date | null, lead: string): Promise<void> {
  await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET reminder_count = reminder_count + 1 WHERE id = $1 RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, 'reminder', $2, reminder_count::text FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'reminder'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz', reminderCount: 'r.reminder_count' }))}
     ), next AS (
       ${insertKeyedJobsFrom(`SELECT '${CFH_REMINDER_JOB}', jsonb_build_object('request_id', r.id, 'phase', $4::text, 'n', $5::int), $6::timestamptz,
         ${timerKey('r.id', "reminder:' || $4::text || ':' || $5::int || '")}
       FROM r WHERE $6::timestamptz IS NOT NULL`)}
     )
     SELECT id FROM r`,
    [requestId, due, lead, phase, n + 1, next],
  );
}
