// SQL of a request's timers (contract section 10), each run in its job's transaction. Each is a
// conditional update: a claim, completion or cancel that committed first makes it change nothing,
// and one that comes while it runs waits on the row and then finds the request as it left it.
// Times are the job's due time, so a late run (every instance was down) stamps what a punctual one would.
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes, type Sql } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import { foldClosed } from '../reports/figures-store.ts';
import type { ReminderPhase, ReminderState } from './rules.ts';
import { CHANGED, endAllTimers, eventsOf, nextReminder } from './sql.ts';

/**
 * One timer's conditional step: `set` applied to the request where `when` holds, then the request's
 * step (`kind`, with `detail`) and its event (status `kind`), and, for a step that closes the
 * request, every timer it still has ended. True when it changed the request. `set` and `when` are
 * written here, over `at`, the job's due time.
 */
async function timerStep(
  q: Tx,
  requestId: number,
  due: string,
  lead: string,
  step: { set: (at: Sql) => Sql; when: Sql; kind: 'timed_out' | 'escalated' | 'completed'; detail?: string; closes: boolean },
): Promise<boolean> {
  const at = sql`${due}::timestamptz`;
  const rows = await q.run(
    withCtes(
      [
        cte('r', sql`UPDATE cfh_requests SET ${step.set(at)}, updated_at = greatest(updated_at, ${at}) WHERE id = ${requestId} AND ${step.when} RETURNING *`),
        ...(step.closes ? foldClosed('r') : []),
        cte('step', sql`INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, ${step.kind}, ${at}, ${step.detail ?? null}::text FROM r`),
        cte('ev', insertEvents(eventsOf({ status: sql`${step.kind}::text`, lead: sql`${lead}::text`, requestFrom: sql`NULL::text`, at }))),
        ...(step.closes ? [cte('ended', endAllTimers(at))] : []),
      ],
      sql`SELECT id FROM r`,
    ),
  );
  return rows.length > 0;
}

/**
 * Timeout: a request still open and unclaimed gets is_timeout and is closed (status timed_out): it
 * is archived and no longer claimable. A claimed request does not time out.
 */
export function markTimedOut(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: (at) => sql`is_timeout = true, timeout_at = ${at}, is_closed = true, closed_at = ${at}`,
    when: sql`NOT is_claimed AND NOT is_closed`,
    kind: 'timed_out',
    closes: true,
  });
}

/** Escalation: a request still open and unclaimed becomes escalated; it stays open and claimable. */
export function markEscalated(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: (at) => sql`is_escalated = true, escalated_at = ${at}`,
    when: sql`NOT is_claimed AND NOT is_closed AND NOT is_escalated`,
    kind: 'escalated',
    closes: false,
  });
}

/** Automatic completion: a claimed request still open is completed with reason no_associate_feedback. */
export function autoComplete(q: Tx, requestId: number, due: string, lead: string): Promise<boolean> {
  return timerStep(q, requestId, due, lead, {
    set: (at) => sql`is_completed = true, completed_at = ${at}, completion_reason = 'no_associate_feedback', is_closed = true, closed_at = ${at}`,
    when: sql`is_claimed AND NOT is_closed`,
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
  const at = sql`${due}::timestamptz`;
  await q.run(
    withCtes(
      [
        cte('r', sql`UPDATE cfh_requests SET reminder_count = reminder_count + 1 WHERE id = ${requestId} RETURNING ${CHANGED}`),
        cte('step', sql`INSERT INTO cfh_request_events (request_id, kind, at, detail) SELECT id, 'reminder', ${at}, reminder_count::text FROM r`),
        cte(
          'ev',
          insertEvents(eventsOf({ status: sql`'reminder'`, lead: sql`${lead}::text`, requestFrom: sql`NULL::text`, at, reminderCount: sql`r.reminder_count` })),
        ),
        cte('next', nextReminder(phase, n + 1, next)),
      ],
      sql`SELECT id FROM r`,
    ),
  );
}
