// SQL fragments Call for Help's stores share: the record's columns, the caller's scope, a change's
// events (contract section 11, the CFH form) and the timers a change starts or ends.
import { callOffJobsFrom, insertKeyedJobsFrom } from '../jobs/queue.ts';

export const RECORD_COLUMNS = `r.id, r.device_id, r.is_claimed, r.claimed_at, r.claimed_by, r.organization_id, r.location_id,
  r.option_id, r.created_at, r.updated_at, r.chat_channel_id, r.message_id, r.is_timeout, r.timeout_at, r.is_closed,
  r.closed_at, r.is_on_the_way, r.staff_on_the_way_at, r.completed_at, r.is_completed, r.completion_reason,
  r.is_canceled, r.customer_canceled_at, r.display_id, r.callbutton_id, r.source, r.is_escalated, r.escalated_at`;

export const STEP_COLUMNS = 'request_id, kind, at, token_id, actor_name, actor_user_id, channel_id, request_from, detail';

/** What a changed request returns for its event. */
export const CHANGED = 'id, organization_id, location_id, option_id, message_id, claimed_by, source, callbutton_id, display_id, reminder_count, custom_text';

/**
 * The caller's scope as a predicate on `alias`: its organization (null: a customer holding the
 * message_id, which is the credential) and its token's locations (null: all of them).
 */
export const scoped = (alias: string, orgParam: string, locationsParam: string) =>
  `(${orgParam}::int IS NULL OR ${alias}.organization_id = ${orgParam}) AND (${locationsParam}::int[] IS NULL OR ${alias}.location_id = ANY (${locationsParam}::int[]))`;

/**
 * The SELECT of a change's events for insertEventsFrom: one per row of `from`, where `r` is the
 * changed request and `o` its option. status, lead, requestFrom and at are SQL expressions. The
 * name is the call button's or the display's; a display's free text is the option text.
 */
export function eventsOf(e: { status: string; lead: string; requestFrom: string; at: string; from?: string; reminderCount?: string }): string {
  return `SELECT 'callforhelp', ${e.status}, r.organization_id, r.location_id, r.id::text,
      jsonb_build_object('type', r.source,
        'name', (SELECT coalesce((SELECT b.name FROM call_buttons b WHERE b.id = r.callbutton_id AND b.organization_id = r.organization_id),
                                 (SELECT d.name FROM cfh_displays d WHERE d.id = r.display_id AND d.organization_id = r.organization_id))),
        'option_text', coalesce(r.custom_text, o.text_en), 'option_prompt', o.prompt_en,
        'message_id', r.message_id, 'claimed_by', r.claimed_by, 'request_from', ${e.requestFrom},
        'staff_action', o.staff_action, 'reminder_count', ${e.reminderCount ?? 'NULL::integer'}),
      ${e.lead} || ': ' || o.prompt_en, ${e.at}
    FROM ${e.from ?? 'r JOIN cfh_options o ON o.id = r.option_id'}`;
}

/** Job kinds of a request's timers (jobs.ts runs them). */
export const CFH_TIMEOUT_JOB = 'cfh.timeout';
export const CFH_ESCALATION_JOB = 'cfh.escalate';
export const CFH_REMINDER_JOB = 'cfh.reminder';
export const CFH_AUTO_COMPLETE_JOB = 'cfh.auto_complete';

/** The default of cfh_auto_complete_seconds. */
export const AUTO_COMPLETE_DEFAULT_SECONDS = 3600;

/** Dedupe keys: `cfh:<id>:<timer>` (reminders add their phase and number). */
export const timerKey = (idSql: string, timer: string) => `'cfh:' || ${idSql} || ':${timer}'`;

/** Ends the timers of an unclaimed request (escalation, timeout) when `r` was claimed or closed. */
const keysOf = (timers: readonly string[]) => timers.map((t) => `SELECT ${timerKey('r.id', t)} FROM r`).join(' UNION ALL ');

/**
 * Ends pending timers of the changed request `r` at `at` (called off: jobs/queue.ts), so a request
 * keeps the record of every timer it was given.
 */
const endTimers = (timers: readonly string[], at: string) => callOffJobsFrom(keysOf(timers), at);

/** Ends the timers of an unclaimed request (escalation, timeout) when `r` was claimed at `at`. */
export const endUnclaimedTimers = (at: string) => endTimers(['escalate', 'timeout'], at);

/** Ends every timer of a request `r` closed at `at` (reminder chains stop on their own). */
export const endAllTimers = (at: string) => endTimers(['escalate', 'timeout', 'auto-complete'], at);

/**
 * The timers a claim starts, for the claimed request `r` at `$at`: automatic completion (the
 * location's cfh_auto_complete_seconds, default 3600, 0 off) and the claimed reminders.
 */
export function claimTimers(at: string): string {
  return insertKeyedJobsFrom(`SELECT k.kind, k.payload, ${at}::timestamptz + make_interval(secs => k.secs), k.key
    FROM r JOIN locations l ON l.id = r.location_id
    CROSS JOIN LATERAL (VALUES
      ('${CFH_AUTO_COMPLETE_JOB}', coalesce(l.cfh_auto_complete_seconds, ${AUTO_COMPLETE_DEFAULT_SECONDS}),
        ${timerKey('r.id', 'auto-complete')}, jsonb_build_object('request_id', r.id)),
      ('${CFH_REMINDER_JOB}', coalesce(l.cfh_reminder_claimed_seconds, 0),
        ${timerKey('r.id', 'reminder:claimed:0')}, jsonb_build_object('request_id', r.id, 'phase', 'claimed', 'n', 0))
    ) AS k (kind, secs, key, payload)
    WHERE k.secs > 0`);
}
