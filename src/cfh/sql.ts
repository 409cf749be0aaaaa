// SQL fragments Call for Help's stores share: the record's columns, a change's
// events (contract section 11, the CFH form) and the timers a change starts or ends. Each is an
// `sql` fragment carrying its own values; the timers are jobs/queue.ts's fragments.
import { sql, type Sql } from '../db/sql.ts';
import { callOffJobs, enqueueKeyedJobs } from '../jobs/queue.ts';

export const RECORD_COLUMNS = `r.id, r.device_id, r.is_claimed, r.claimed_at, r.claimed_by, r.organization_id, r.location_id,
  r.option_id, r.created_at, r.updated_at, r.chat_channel_id, r.message_id, r.is_timeout, r.timeout_at, r.is_closed,
  r.closed_at, r.is_on_the_way, r.staff_on_the_way_at, r.completed_at, r.is_completed, r.completion_reason,
  r.is_canceled, r.customer_canceled_at, r.display_id, r.callbutton_id, r.source, r.is_escalated, r.escalated_at`;

export const STEP_COLUMNS = sql.raw('request_id, kind, at, token_id, actor_name, actor_user_id, channel_id, request_from, detail');

/** What a changed request returns for its event. */
export const CHANGED = sql.raw(
  'id, organization_id, location_id, option_id, message_id, claimed_by, source, callbutton_id, display_id, reminder_count, custom_text',
);

/**
 * The SELECT of a change's events for insertEvents: one per row of `from`, where `r` is the
 * changed request and `o` its option. status, lead, requestFrom and at are SQL expressions. The
 * name is the call button's or the display's; a display's free text is the option text.
 */
export function eventsOf(e: { status: Sql; lead: Sql; requestFrom: Sql; at: Sql; from?: Sql; reminderCount?: Sql }): Sql {
  return sql`SELECT 'callforhelp', ${e.status}, r.organization_id, r.location_id, r.id::text,
      jsonb_build_object('type', r.source,
        'name', (SELECT coalesce((SELECT b.name FROM call_buttons b WHERE b.id = r.callbutton_id AND b.location_id = r.location_id),
                                 (SELECT d.name FROM cfh_displays d WHERE d.id = r.display_id AND d.location_id = r.location_id))),
        'option_text', coalesce(r.custom_text, o.text_en), 'option_prompt', o.prompt_en,
        'message_id', r.message_id, 'claimed_by', r.claimed_by, 'request_from', ${e.requestFrom},
        'staff_action', o.staff_action, 'reminder_count', ${e.reminderCount ?? sql`NULL::integer`}),
      ${e.lead} || ': ' || o.prompt_en, ${e.at}
    FROM ${e.from ?? sql`r JOIN cfh_options o ON o.id = r.option_id`}`;
}

/** Job kinds of a request's timers (jobs.ts runs them). */
export const CFH_TIMEOUT_JOB = 'cfh.timeout';
export const CFH_ESCALATION_JOB = 'cfh.escalate';
export const CFH_REMINDER_JOB = 'cfh.reminder';
export const CFH_AUTO_COMPLETE_JOB = 'cfh.auto_complete';

/** The default of cfh_auto_complete_seconds. */
export const AUTO_COMPLETE_DEFAULT_SECONDS = 3600;

/** Dedupe keys: `cfh:<id>:<timer>` (reminders add their phase and number). */
export const timerKey = (id: Sql, timer: string | Sql): Sql => sql`'cfh:' || ${id} || ':' || ${typeof timer === 'string' ? sql`${timer}::text` : timer}`;

/** The keys of the timers of the changed request `r`. */
const keysOf = (timers: readonly string[]): Sql =>
  sql.join(
    timers.map((t) => sql`SELECT ${timerKey(sql`r.id`, t)} FROM r`),
    ' UNION ALL ',
  );

/** Ends the timers of an unclaimed request (escalation, timeout) when `r` was claimed at `at`. */
export const endUnclaimedTimers = (at: Date | Sql) => callOffJobs(keysOf(['escalate', 'timeout']), at);

/** Ends every timer of a request `r` closed at `at` (reminder chains stop on their own). */
export const endAllTimers = (at: Date | Sql) => callOffJobs(keysOf(['escalate', 'timeout', 'auto-complete']), at);

/**
 * The timers a new request `r` starts at `at` (none when it was recorded closed): timeout,
 * escalation (its location `loc`'s seconds, else the service's) and the first unclaimed reminder.
 */
export function createdTimers(at: Date, defaults: { timeoutSeconds: number; escalationSeconds: number }): Sql {
  return enqueueKeyedJobs(sql`SELECT k.kind, k.payload, ${at}::timestamptz + make_interval(secs => k.secs), k.key
    FROM r CROSS JOIN loc CROSS JOIN LATERAL (VALUES
      (${CFH_TIMEOUT_JOB}::text, coalesce(loc.cfh_timeout_seconds, ${defaults.timeoutSeconds}::integer), ${timerKey(sql`r.id`, 'timeout')},
        jsonb_build_object('request_id', r.id)),
      (${CFH_ESCALATION_JOB}::text, coalesce(loc.cfh_escalation_seconds, ${defaults.escalationSeconds}::integer), ${timerKey(sql`r.id`, 'escalate')},
        jsonb_build_object('request_id', r.id)),
      (${CFH_REMINDER_JOB}::text, coalesce(loc.cfh_reminder_seconds, 0), ${timerKey(sql`r.id`, 'reminder:unclaimed:0')},
        jsonb_build_object('request_id', r.id, 'phase', 'unclaimed', 'n', 0))
    ) AS k (kind, secs, key, payload)
    WHERE k.secs > 0 AND NOT r.is_closed`);
}

/**
 * The timers a claim starts, for the claimed request `r` at `at`: automatic completion (the
 * location's cfh_auto_complete_seconds, default 3600, 0 off) and the claimed reminders.
 */
export function claimTimers(at: Date): Sql {
  return enqueueKeyedJobs(sql`SELECT k.kind, k.payload, ${at}::timestamptz + make_interval(secs => k.secs), k.key
    FROM r JOIN locations l ON l.id = r.location_id
    CROSS JOIN LATERAL (VALUES
      (${CFH_AUTO_COMPLETE_JOB}::text, coalesce(l.cfh_auto_complete_seconds, ${AUTO_COMPLETE_DEFAULT_SECONDS}::integer),
        ${timerKey(sql`r.id`, 'auto-complete')}, jsonb_build_object('request_id', r.id)),
      (${CFH_REMINDER_JOB}::text, coalesce(l.cfh_reminder_claimed_seconds, 0),
        ${timerKey(sql`r.id`, 'reminder:claimed:0')}, jsonb_build_object('request_id', r.id, 'phase', 'claimed', 'n', 0))
    ) AS k (kind, secs, key, payload)
    WHERE k.secs > 0`);
}

/** The next reminder of the changed request `r`, in `phase` with number `n`, at `runAt` (none when null). */
export function nextReminder(phase: string, n: number, runAt: Date | null): Sql {
  return enqueueKeyedJobs(sql`SELECT ${CFH_REMINDER_JOB}::text, jsonb_build_object('request_id', r.id, 'phase', ${phase}::text, 'n', ${n}::int),
      ${runAt}::timestamptz, ${timerKey(sql`r.id`, sql`'reminder:' || ${phase}::text || ':' || ${n}::int`)}
    FROM r WHERE ${runAt}::timestamptz IS NOT NULL`);
}

/**
 * Whether request `alias` must be scanned before a person completes it (contract section 19): its
 * option, call button or display has require_scan.
 */
export const requiresScan = (alias: string): string => `(
  coalesce((SELECT so.require_scan FROM cfh_options so WHERE so.id = ${alias}.option_id), false)
  OR coalesce((SELECT sb.require_scan FROM call_buttons sb WHERE sb.id = ${alias}.callbutton_id), false)
  OR coalesce((SELECT sd.require_scan FROM cfh_displays sd WHERE sd.id = ${alias}.display_id), false))`;
