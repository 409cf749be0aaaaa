// SQL of Call for Help's steps. Each step is one statement where it can be: the change, its line in
// the request's step log (cfh_request_events), its event in the event log and the timers it starts
// or ends, in one round trip. Every lookup is by the unique message_id within the caller's scope
// (sql.ts `scoped`), so a request of another organization is indistinguishable from none.
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsFrom } from '../events/log.ts';
import { insertKeyedJobsFrom } from '../jobs/queue.ts';
import type { OnTheWayState, Staff } from './rules.ts';
import type { RequestRow, StatusRow } from './rows.ts';
import {
  CFH_ESCALATION_JOB,
  CFH_REMINDER_JOB,
  CFH_TIMEOUT_JOB,
  CHANGED,
  claimTimers,
  endAllTimers,
  endUnclaimedTimers,
  eventsOf,
  RECORD_COLUMNS,
  scoped,
  STEP_COLUMNS,
  timerKey,
} from './sql.ts';

export { CFH_TIMEOUT_JOB } from './sql.ts';

/** Whose scope a lookup is in: an organization (null: anyone holding the message_id) and its token's locations (null: all). */
export interface Scope {
  organizationId: number | null;
  locationIds: readonly number[] | null;
}

const scopeParams = (s: Scope) => [s.organizationId, s.locationIds === null ? null : [...s.locationIds]];

export interface NewRequest {
  organizationId: number;
  /** The token's locations: a location outside them is not found. */
  locationIds: readonly number[] | null;
  locationId: number;
  optionId: number;
  messageId: string;
  deviceId: number | null;
  displayId: number | null;
  callbuttonId: number | null;
  chatChannelId: string | null;
  tokenId: number | null;
  source: 'api' | 'call_button' | 'display';
  customText: string | null;
  /** request_from of the created step (call_button for a button's press). */
  requestFrom: string | null;
  /** The service's CFH_TIMEOUT_SECONDS and CFH_ESCALATION_SECONDS, for a location without its own. */
  defaultTimeoutSeconds: number;
  defaultEscalationSeconds: number;
}

export interface InsertResult {
  locationFound: boolean;
  optionFound: boolean;
  /** null when the location or the option did not check out (nothing was written). */
  row: RequestRow | null;
}

/**
 * C0, B1 and C9 in one statement: the location and option checks, the request, its steps, its
 * events and its timers (timeout, escalation, first reminder). An option whose staff_action is
 * `none` is recorded and closed at once as completed with reason `recorded`, and starts no timer.
 */
export async function insertRequest(q: Tx, input: NewRequest, leads: { created: string; completed: string }, now: Date): Promise<InsertResult> {
  const [result] = await q.query<RequestRow & { location_found: boolean; option_found: boolean }>(
    `WITH loc AS (
       SELECT id, cfh_timeout_seconds, cfh_escalation_seconds, cfh_reminder_seconds FROM locations
       WHERE id = $1 AND organization_id = $3 AND ($13::int[] IS NULL OR id = ANY ($13::int[]))
     ), opt AS (
       SELECT id, text_en, prompt_en, staff_action, staff_action = 'none' AS records
       FROM cfh_options WHERE id = $2 AND organization_id = $3 AND (location_id IS NULL OR location_id = $1)
     ), r AS (
       INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, device_id, display_id, callbutton_id, chat_channel_id,
         source, custom_text, created_at, updated_at, is_completed, completed_at, completion_reason, is_closed, closed_at)
       SELECT $4, $3, loc.id, opt.id, $5::integer, $6::integer, $7::integer, $8::text, $14, $15::text, $9, $9,
         opt.records, CASE WHEN opt.records THEN $9::timestamptz END, CASE WHEN opt.records THEN 'recorded' END,
         opt.records, CASE WHEN opt.records THEN $9::timestamptz END
       FROM loc, opt
       RETURNING *
     ), steps AS (
       SELECT 'created' AS kind, $17::text AS lead, NULL AS detail UNION ALL
       SELECT 'completed', $18::text, 'recorded' FROM opt WHERE opt.records
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT r.id, steps.kind, $9, $10, NULL, NULL, NULL, $16, steps.detail FROM r CROSS JOIN steps
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: 'steps.kind', lead: 'steps.lead', requestFrom: '$16::text', at: '$9::timestamptz', from: 'r JOIN opt o ON o.id = r.option_id CROSS JOIN steps' }))}
     ), job AS (
       ${insertKeyedJobsFrom(`SELECT k.kind, k.payload, $9::timestamptz + make_interval(secs => k.secs), k.key
       FROM r CROSS JOIN loc CROSS JOIN LATERAL (VALUES
         ('${CFH_TIMEOUT_JOB}', coalesce(loc.cfh_timeout_seconds, $11::integer), ${timerKey('r.id', 'timeout')}, jsonb_build_object('request_id', r.id)),
         ('${CFH_ESCALATION_JOB}', coalesce(loc.cfh_escalation_seconds, $12::integer), ${timerKey('r.id', 'escalate')}, jsonb_build_object('request_id', r.id)),
         ('${CFH_REMINDER_JOB}', coalesce(loc.cfh_reminder_seconds, 0), ${timerKey('r.id', 'reminder:unclaimed:0')},
           jsonb_build_object('request_id', r.id, 'phase', 'unclaimed', 'n', 0))
       ) AS k (kind, secs, key, payload)
       WHERE k.secs > 0 AND NOT r.is_closed`)}
     )
     SELECT EXISTS (SELECT 1 FROM loc) AS location_found, EXISTS (SELECT 1 FROM opt) AS option_found, ${RECORD_COLUMNS}
     FROM (VALUES (1)) AS one LEFT JOIN r ON true`,
    [
      input.locationId,
      input.optionId,
      input.organizationId,
      input.messageId,
      input.deviceId,
      input.displayId,
      input.callbuttonId,
      input.chatChannelId,
      now,
      input.tokenId,
      input.defaultTimeoutSeconds,
      input.defaultEscalationSeconds,
      input.locationIds === null ? null : [...input.locationIds],
      input.source,
      input.customText,
      input.requestFrom,
      leads.created,
      leads.completed,
    ],
  );
  if (result === undefined) throw new Error('the insert of a CFH request returned no row');
  const { location_found, option_found, ...row } = result;
  return { locationFound: location_found, optionFound: option_found, row: row.id === null ? null : row };
}

/** Whether the scope has a request of this message_id (what a refused step asks). */
export async function exists(q: Queryable, scope: Scope, messageId: string): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM cfh_requests r WHERE message_id = $1 AND ${scoped('r', '$2', '$3')}`, [messageId, ...scopeParams(scope)]);
  return rows.length > 0;
}

/**
 * C1: true if it claimed. Only an open, unclaimed request is claimed. Concurrent claims, and a
 * claim racing the timeout, queue on the row lock and each re-checks the condition on the row as
 * the previous one committed it: exactly one succeeds. The claim ends the escalation and timeout
 * timers and starts automatic completion and the claimed reminders.
 */
export async function claim(q: Tx, scope: Scope, messageId: string, staff: Staff, tokenId: number | null, lead: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests r SET is_claimed = true, claimed_at = $4, claimed_by = $5, claimed_by_user_id = $6, claimed_from = $7, updated_at = $4
       WHERE message_id = $1 AND ${scoped('r', '$2', '$3')} AND NOT is_claimed AND NOT is_closed
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT id, 'claimed', $4, $8, $5, $6, $9, $7, NULL FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'claimed'", lead: '$10::text', requestFrom: '$7::text', at: '$4::timestamptz' }))}
     ), ended AS (${endUnclaimedTimers('$4::timestamptz')}
     ), timers AS (${claimTimers('$4')})
     SELECT id FROM r`,
    [messageId, ...scopeParams(scope), now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, lead],
  );
  return rows.length > 0;
}

export interface CompleteResult {
  found: boolean;
  /** false: the location has outcomes and the reason is none of their keys (nothing changed). */
  outcomeOk: boolean;
  completed: boolean;
}

/**
 * C3 (and B2): completes an open request (by whoever helped the customer). When `checkOutcome`
 * and the location has outcomes, the reason must be one of their keys. `onlyButton` limits it to
 * a button's own requests.
 */
export async function complete(
  q: Tx,
  scope: Scope,
  messageId: string,
  staff: Staff,
  reason: string,
  tokenId: number | null,
  lead: string,
  now: Date,
  opts: { checkOutcome: boolean; onlyButton?: number },
): Promise<CompleteResult> {
  const [row] = await q.query<CompleteResult>(
    `WITH t AS (
       SELECT c.id, NOT $12::boolean OR NOT EXISTS (SELECT 1 FROM cfh_outcomes x WHERE x.location_id = c.location_id)
         OR EXISTS (SELECT 1 FROM cfh_outcomes x WHERE x.location_id = c.location_id AND x.key = $10) AS outcome_ok
       FROM cfh_requests c WHERE c.message_id = $1 AND ${scoped('c', '$2', '$3')} AND ($13::int IS NULL OR c.callbutton_id = $13)
     ), r AS (
       UPDATE cfh_requests c SET is_completed = true, completed_at = $4, completion_reason = $10, is_closed = true, closed_at = $4, updated_at = $4
       FROM t WHERE c.id = t.id AND t.outcome_ok AND NOT c.is_closed
       RETURNING c.id, c.organization_id, c.location_id, c.option_id, c.message_id, c.claimed_by, c.source, c.callbutton_id, c.display_id, c.reminder_count, c.custom_text
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT id, 'completed', $4, $8, $5, $6, $9, $7, $10 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'completed'", lead: '$11::text', requestFrom: '$7::text', at: '$4::timestamptz' }))}
     ), ended AS (${endAllTimers('$4::timestamptz')})
     SELECT EXISTS (SELECT 1 FROM t) AS found, coalesce((SELECT outcome_ok FROM t), true) AS "outcomeOk", EXISTS (SELECT 1 FROM r) AS completed`,
    [
      messageId,
      ...scopeParams(scope),
      now,
      staff.name,
      staff.userId,
      staff.from,
      tokenId,
      staff.channelId,
      reason,
      lead,
      opts.checkOutcome,
      opts.onlyButton ?? null,
    ],
  );
  if (row === undefined) throw new Error('the completion of a CFH request returned no row');
  return row;
}

/** C2's transaction: the request locked, so the decision holds until it is written. */
export async function lockForOnTheWay(q: Queryable, scope: Scope, messageId: string): Promise<(OnTheWayState & { id: number }) | null> {
  const [row] = await q.query<OnTheWayState & { id: number }>(
    `SELECT id, is_closed, is_claimed, is_on_the_way, claimed_by_user_id, claimed_from FROM cfh_requests r
     WHERE message_id = $1 AND ${scoped('r', '$2', '$3')} FOR UPDATE`,
    [messageId, ...scopeParams(scope)],
  );
  return row ?? null;
}

/** C2's change: a step and an event for each of claiming and going that it makes (leads of both given). */
export async function writeOnTheWay(
  q: Tx,
  id: number,
  change: { claims: boolean; goes: boolean },
  staff: Staff,
  tokenId: number | null,
  leads: { claimed: string; onTheWay: string },
  now: Date,
): Promise<void> {
  await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET
         is_claimed = true,
         claimed_at = CASE WHEN $2 THEN $4 ELSE claimed_at END,
         claimed_by = CASE WHEN $2 THEN $5 ELSE claimed_by END,
         claimed_by_user_id = CASE WHEN $2 THEN $6 ELSE claimed_by_user_id END,
         claimed_from = CASE WHEN $2 THEN $7 ELSE claimed_from END,
         is_on_the_way = true,
         staff_on_the_way_at = CASE WHEN $3 THEN $4 ELSE staff_on_the_way_at END,
         updated_at = $4
       WHERE id = $1
       RETURNING ${CHANGED}
     ), steps AS (
       SELECT kind, lead FROM (VALUES ('claimed', $2::boolean, $10::text), ('on_the_way', $3::boolean, $11::text)) AS s (kind, wanted, lead)
       WHERE wanted
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT r.id, steps.kind, $4, $8, $5, $6, $9, $7, NULL FROM r CROSS JOIN steps
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: 'steps.kind', lead: 'steps.lead', requestFrom: '$7::text', at: '$4::timestamptz', from: 'r JOIN cfh_options o ON o.id = r.option_id CROSS JOIN steps' }))}
     ), ended AS (${endUnclaimedTimers('$4::timestamptz')}
     ), timers AS (${claimTimers('$4')})
     SELECT id FROM r`,
    [id, change.claims, change.goes, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, leads.claimed, leads.onTheWay],
  );
}

/**
 * C4 (and B2): the request, if it was open and is now cancelled (is_claimed false, closed_at and
 * customer_canceled_at the same instant); null if nothing changed.
 */
export async function cancel(
  q: Tx,
  scope: Scope,
  messageId: string,
  tokenId: number | null,
  lead: string,
  now: Date,
  opts: { onlyButton?: number; requestFrom?: string } = {},
): Promise<RequestRow | null> {
  const [canceled] = await q.query<RequestRow>(
    `WITH r AS (
       UPDATE cfh_requests r SET is_canceled = true, customer_canceled_at = $4, is_closed = true, closed_at = $4, is_claimed = false, updated_at = $4
       WHERE message_id = $1 AND ${scoped('r', '$2', '$3')} AND NOT is_closed AND ($7::int IS NULL OR callbutton_id = $7)
       RETURNING *
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, token_id, request_from) SELECT id, 'canceled', $4, $5, $8 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'cancelled'", lead: '$6::text', requestFrom: '$8::text', at: '$4::timestamptz' }))}
     ), ended AS (${endAllTimers('$4::timestamptz')})
     SELECT ${RECORD_COLUMNS} FROM r`,
    [messageId, ...scopeParams(scope), now, tokenId, lead, opts.onlyButton ?? null, opts.requestFrom ?? null],
  );
  return canceled ?? null;
}

export async function findRecord(q: Queryable, scope: Scope, messageId: string): Promise<RequestRow | null> {
  const [row] = await q.query<RequestRow>(`SELECT ${RECORD_COLUMNS} FROM cfh_requests r WHERE message_id = $1 AND ${scoped('r', '$2', '$3')}`, [
    messageId,
    ...scopeParams(scope),
  ]);
  return row ?? null;
}

/** C5: the request, its option and its location's name format, one indexed read. */
export async function findStatus(q: Queryable, scope: Scope, messageId: string): Promise<StatusRow | null> {
  const [row] = await q.query<StatusRow>(
    `SELECT r.id AS request_id, r.device_id, r.location_id, r.organization_id, r.message_id, r.option_id, r.is_claimed, r.claimed_at, r.claimed_by,
       r.created_at, r.updated_at, r.is_timeout, r.timeout_at, r.is_closed, r.closed_at, r.is_on_the_way, r.staff_on_the_way_at,
       r.is_completed, r.is_canceled, r.customer_canceled_at, r.source, r.is_escalated, r.escalated_at, r.chat_channel_id, r.custom_text,
       o.text_en AS option_text_en, o.text_fr AS option_text_fr, o.prompt_en AS option_prompt_en, o.prompt_fr AS option_prompt_fr,
       o.organization_id AS option_organization_id, o.location_id AS option_location_id,
       o.created_at AS option_created_at, o.updated_at AS option_updated_at,
       coalesce(l.staff_name_format, 'full') AS staff_name_format, coalesce(l.language, 'en') AS language,
       l.name AS store_name
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id JOIN locations l ON l.id = r.location_id
     WHERE r.message_id = $1 AND ${scoped('r', '$2', '$3')}`,
    [messageId, ...scopeParams(scope)],
  );
  return row ?? null;
}

export interface StepRow {
  kind: string;
  at: string;
  token_id: number | null;
  actor_name: string | null;
  actor_user_id: string | null;
  channel_id: string | null;
  request_from: string | null;
  detail: string | null;
}

/** The steps of a request in order (for reports of response times). */
export async function listEvents(q: Queryable, organizationId: number, messageId: string): Promise<StepRow[]> {
  return q.query<StepRow>(
    `SELECT e.kind, e.at, e.token_id, e.actor_name, e.actor_user_id, e.channel_id, e.request_from, e.detail
     FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id
     WHERE r.message_id = $1 AND r.organization_id = $2
     ORDER BY e.at, e.id`,
    [messageId, organizationId],
  );
}
