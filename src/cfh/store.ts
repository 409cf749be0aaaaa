// SQL of Call for Help. Each step is one statement where it can be: the change, its line in the
// request's step log (cfh_request_events) and its event in the event log, in one round trip.
// Every lookup is by the unique message_id and the caller's organization, so a request of another
// organization is indistinguishable from none.
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsFrom } from '../events/log.ts';
import { insertJobsFrom } from '../jobs/queue.ts';
import type { OnTheWayState, Staff } from './rules.ts';
import type { RequestRow, StatusRow } from './rows.ts';

const RECORD_COLUMNS = `r.id, r.device_id, r.is_claimed, r.claimed_at, r.claimed_by, r.organization_id, r.location_id,
  r.option_id, r.created_at, r.updated_at, r.chat_channel_id, r.message_id, r.is_timeout, r.timeout_at, r.is_closed,
  r.closed_at, r.is_on_the_way, r.staff_on_the_way_at, r.completed_at, r.is_completed, r.completion_reason,
  r.is_canceled, r.customer_canceled_at, r.display_id, r.callbutton_id`;

const STEP_COLUMNS = 'request_id, kind, at, token_id, actor_name, actor_user_id, channel_id, request_from, detail';

/** What a changed request returns for its event. */
const CHANGED = 'id, organization_id, location_id, option_id, message_id, claimed_by';

/**
 * The SELECT of a change's events (contract section 11, the CFH form) for insertEventsFrom: one per
 * row of `from`, where `r` is the changed request and `o` its option. status, lead, requestFrom and
 * at are SQL expressions. Until devices and options carry their own, every request comes through
 * the API, has no device name, and staff claim and go.
 */
function eventsOf(e: { status: string; lead: string; requestFrom: string; at: string; from?: string }): string {
  return `SELECT 'callforhelp', ${e.status}, r.organization_id, r.location_id, r.id::text,
      jsonb_build_object('type', 'api', 'name', NULL::text, 'option_text', o.text_en, 'option_prompt', o.prompt_en,
        'message_id', r.message_id, 'claimed_by', r.claimed_by, 'request_from', ${e.requestFrom},
        'staff_action', 'claim_and_on_the_way', 'reminder_count', NULL::integer),
      ${e.lead} || ': ' || o.prompt_en, ${e.at}
    FROM ${e.from ?? 'r JOIN cfh_options o ON o.id = r.option_id'}`;
}

/** The scheduler's job kind of a request's timeout (jobs.ts). */
export const CFH_TIMEOUT_JOB = 'cfh.timeout';

export interface NewRequest {
  organizationId: number;
  locationId: number;
  optionId: number;
  messageId: string;
  deviceId: number | null;
  displayId: number | null;
  callbuttonId: number | null;
  chatChannelId: string | null;
  tokenId: number;
  /** The service's CFH_TIMEOUT_SECONDS, for a location without a timeout of its own. */
  defaultTimeoutSeconds: number;
}

export interface InsertResult {
  locationFound: boolean;
  optionFound: boolean;
  /** null when the location or the option did not check out (nothing was written). */
  row: RequestRow | null;
}

/**
 * C0 in one statement: the location and option checks, the request, its step, its "created" event
 * and its timeout job, so that creation is one round trip instead of a five-statement transaction.
 * The deadline is the location's cfh_timeout_seconds, else the service default.
 */
export async function insertRequest(q: Tx, input: NewRequest, lead: string, now: Date): Promise<InsertResult> {
  const [result] = await q.query<RequestRow & { location_found: boolean; option_found: boolean }>(
    `WITH loc AS (
       SELECT id, cfh_timeout_seconds FROM locations WHERE id = $1 AND organization_id = $3
     ), opt AS (
       SELECT id, text_en, prompt_en FROM cfh_options WHERE id = $2 AND organization_id = $3 AND (location_id IS NULL OR location_id = $1)
     ), r AS (
       INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, device_id, display_id, callbutton_id, chat_channel_id, created_at, updated_at)
       SELECT $4, $3, loc.id, opt.id, $5::integer, $6::integer, $7::integer, $8::text, $9, $9 FROM loc, opt
       RETURNING *
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, token_id) SELECT id, 'created', $9, $10 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'created'", lead: '$13::text', requestFrom: 'NULL::text', at: '$9::timestamptz', from: 'r JOIN opt o ON o.id = r.option_id' }))}
     ), job AS (
       ${insertJobsFrom(`SELECT $11, jsonb_build_object('request_id', r.id),
         $9::timestamptz + make_interval(secs => COALESCE(loc.cfh_timeout_seconds, $12::integer))
       FROM r, loc`)}
     )
     SELECT EXISTS (SELECT 1 FROM loc) AS location_found, EXISTS (SELECT 1 FROM opt) AS option_found, ${RECORD_COLUMNS}
     FROM (VALUES (1)) AS one LEFT JOIN r ON true`,
    [input.locationId, input.optionId, input.organizationId, input.messageId, input.deviceId, input.displayId, input.callbuttonId,
      input.chatChannelId, now, input.tokenId, CFH_TIMEOUT_JOB, input.defaultTimeoutSeconds, lead],
  );
  if (result === undefined) throw new Error('the insert of a CFH request returned no row');
  const { location_found, option_found, ...row } = result;
  return { locationFound: location_found, optionFound: option_found, row: row.id === null ? null : row };
}

/** Whether the organization has a request of this message_id (what a refused step asks). */
export async function exists(q: Queryable, organizationId: number, messageId: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM cfh_requests WHERE message_id = $1 AND organization_id = $2', [messageId, organizationId]);
  return rows.length > 0;
}

/**
 * C1: true if it claimed. Only an open, unclaimed request is claimed. Concurrent claims queue on
 * the row lock and each re-checks the condition on the row as the previous one committed it:
 * exactly one succeeds.
 */
export async function claim(q: Tx, organizationId: number, messageId: string, staff: Staff, tokenId: number, lead: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_claimed = true, claimed_at = $3, claimed_by = $4, claimed_by_user_id = $5, claimed_from = $6, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_claimed AND NOT is_closed
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT id, 'claimed', $3, $7, $4, $5, $8, $6, NULL FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'claimed'", lead: '$9::text', requestFrom: '$6::text', at: '$3::timestamptz' }))}
     )
     SELECT id FROM r`,
    [messageId, organizationId, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, lead],
  );
  return rows.length > 0;
}

/** C3: true if it completed. Any open request can be completed (by whoever helped the customer); a closed one cannot. */
export async function complete(
  q: Tx, organizationId: number, messageId: string, staff: Staff, customerStatus: string, tokenId: number, lead: string, now: Date,
): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_completed = true, completed_at = $3, completion_reason = $9, is_closed = true, closed_at = $3, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_closed
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (${STEP_COLUMNS})
       SELECT id, 'completed', $3, $7, $4, $5, $8, $6, $9 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'completed'", lead: '$10::text', requestFrom: '$6::text', at: '$3::timestamptz' }))}
     )
     SELECT id FROM r`,
    [messageId, organizationId, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, customerStatus, lead],
  );
  return rows.length > 0;
}

/** C2's transaction: the request locked, so the decision holds until it is written. */
export async function lockForOnTheWay(q: Queryable, organizationId: number, messageId: string): Promise<(OnTheWayState & { id: number }) | null> {
  const [row] = await q.query<OnTheWayState & { id: number }>(
    `SELECT id, is_closed, is_claimed, is_on_the_way, claimed_by_user_id, claimed_from FROM cfh_requests
     WHERE message_id = $1 AND organization_id = $2 FOR UPDATE`,
    [messageId, organizationId],
  );
  return row ?? null;
}

/** C2's change: a step and an event for each of claiming and going that it makes (leads of both given). */
export async function writeOnTheWay(
  q: Tx, id: number, change: { claims: boolean; goes: boolean }, staff: Staff, tokenId: number, leads: { claimed: string; onTheWay: string }, now: Date,
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
     )
     SELECT id FROM r`,
    [id, change.claims, change.goes, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, leads.claimed, leads.onTheWay],
  );
}

/**
 * C4: the request, if it was open and is now cancelled (is_claimed false, closed_at and
 * customer_canceled_at the same instant); null if nothing changed.
 */
export async function cancel(q: Tx, organizationId: number, messageId: string, tokenId: number, lead: string, now: Date): Promise<RequestRow | null> {
  const [canceled] = await q.query<RequestRow>(
    `WITH r AS (
       UPDATE cfh_requests SET is_canceled = true, customer_canceled_at = $3, is_closed = true, closed_at = $3, is_claimed = false, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_closed
       RETURNING *
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at, token_id) SELECT id, 'canceled', $3, $4 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'cancelled'", lead: '$5::text', requestFrom: 'NULL::text', at: '$3::timestamptz' }))}
     )
     SELECT ${RECORD_COLUMNS} FROM r`,
    [messageId, organizationId, now, tokenId, lead],
  );
  return canceled ?? null;
}

export async function findRecord(q: Queryable, organizationId: number, messageId: string): Promise<RequestRow | null> {
  const [row] = await q.query<RequestRow>(
    `SELECT ${RECORD_COLUMNS} FROM cfh_requests r WHERE message_id = $1 AND organization_id = $2`,
    [messageId, organizationId],
  );
  return row ?? null;
}

/** C5: the request and its option, one indexed read. */
export async function findStatus(q: Queryable, organizationId: number, messageId: string): Promise<StatusRow | null> {
  const [row] = await q.query<StatusRow>(
    `SELECT r.device_id, r.location_id, r.organization_id, r.message_id, r.option_id, r.is_claimed, r.claimed_at, r.claimed_by,
       r.created_at, r.updated_at, r.is_timeout, r.timeout_at, r.is_closed, r.closed_at, r.is_on_the_way, r.staff_on_the_way_at,
       r.is_completed, r.is_canceled, r.customer_canceled_at,
       o.text_en AS option_text_en, o.text_fr AS option_text_fr, o.prompt_en AS option_prompt_en, o.prompt_fr AS option_prompt_fr,
       o.organization_id AS option_organization_id, o.location_id AS option_location_id,
       o.created_at AS option_created_at, o.updated_at AS option_updated_at
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     WHERE r.message_id = $1 AND r.organization_id = $2`,
    [messageId, organizationId],
  );
  return row ?? null;
}

/**
 * The timeout: true if the request timed out. It judges the request as it stood at its deadline,
 * so a late run (the service was down) gives the same answer as a punctual one: timed out if it
 * was open and unclaimed then. It never closes the request: the request stays claimable.
 */
export async function markTimedOut(q: Tx, requestId: number, deadline: string, lead: string): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_timeout = true, timeout_at = $2, updated_at = GREATEST(updated_at, $2::timestamptz)
       WHERE id = $1 AND NOT is_timeout
         AND (claimed_at IS NULL OR claimed_at > $2) AND (closed_at IS NULL OR closed_at > $2)
       RETURNING ${CHANGED}
     ), step AS (
       INSERT INTO cfh_request_events (request_id, kind, at) SELECT id, 'timed_out', $2 FROM r
     ), ev AS (
       ${insertEventsFrom(q, eventsOf({ status: "'timed_out'", lead: '$3::text', requestFrom: 'NULL::text', at: '$2::timestamptz' }))}
     )
     SELECT id FROM r`,
    [requestId, deadline, lead],
  );
  return rows.length > 0;
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
