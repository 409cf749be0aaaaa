// SQL of Call for Help. Each step is one statement where it can be (the update and its event in
// one round trip); every lookup is by the unique message_id and the caller's organization, so a
// request of another organization is indistinguishable from none.
import type { Db, Queryable } from '../db/db.ts';
import type { OnTheWayState, RequestRow, Staff, StatusRow } from './rules.ts';

const RECORD_COLUMNS = `r.id, r.device_id, r.is_claimed, r.claimed_at, r.claimed_by, r.organization_id, r.location_id,
  r.option_id, r.created_at, r.updated_at, r.chat_channel_id, r.message_id, r.is_timeout, r.timeout_at, r.is_closed,
  r.closed_at, r.is_on_the_way, r.staff_on_the_way_at, r.completed_at, r.is_completed, r.completion_reason,
  r.is_canceled, r.customer_canceled_at, r.display_id, r.callbutton_id`;

const EVENT_COLUMNS = 'request_id, kind, at, token_id, actor_name, actor_user_id, channel_id, request_from, detail';

/** The scheduler's job kind of a request's timeout; its handler is markTimedOut. */
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
 * C0 in one statement: the location and option checks, the request, its "created" event and its
 * timeout job, which is the row scheduler.enqueue(q, CFH_TIMEOUT_JOB, { request_id }, deadline)
 * writes, inserted here so that creation is one round trip instead of a four-statement
 * transaction. The deadline is the location's cfh_timeout_seconds, else the service default.
 */
export async function insertRequest(q: Queryable, input: NewRequest, now: Date): Promise<InsertResult> {
  const [result] = await q.query<RequestRow & { location_found: boolean; option_found: boolean }>(
    `WITH loc AS (
       SELECT id, cfh_timeout_seconds FROM locations WHERE id = $1 AND organization_id = $3
     ), opt AS (
       SELECT id FROM cfh_options WHERE id = $2 AND organization_id = $3 AND (location_id IS NULL OR location_id = $1)
     ), r AS (
       INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, device_id, display_id, callbutton_id, chat_channel_id, created_at, updated_at)
       SELECT $4, $3, loc.id, opt.id, $5::integer, $6::integer, $7::integer, $8::text, $9, $9 FROM loc, opt
       RETURNING *
     ), ev AS (
       INSERT INTO cfh_request_events (request_id, kind, at, token_id) SELECT id, 'created', $9, $10 FROM r
     ), job AS (
       INSERT INTO jobs (kind, payload, run_at)
       SELECT $11, jsonb_build_object('request_id', r.id),
         $9::timestamptz + make_interval(secs => COALESCE(loc.cfh_timeout_seconds, $12::integer))
       FROM r, loc
     )
     SELECT EXISTS (SELECT 1 FROM loc) AS location_found, EXISTS (SELECT 1 FROM opt) AS option_found, ${RECORD_COLUMNS}
     FROM (VALUES (1)) AS one LEFT JOIN r ON true`,
    [input.locationId, input.optionId, input.organizationId, input.messageId, input.deviceId, input.displayId, input.callbuttonId,
      input.chatChannelId, now, input.tokenId, CFH_TIMEOUT_JOB, input.defaultTimeoutSeconds],
  );
  if (result === undefined) throw new Error('the insert of a CFH request returned no row');
  const { location_found, option_found, ...row } = result;
  return { locationFound: location_found, optionFound: option_found, row: row.id === null ? null : row };
}

async function exists(q: Queryable, organizationId: number, messageId: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM cfh_requests WHERE message_id = $1 AND organization_id = $2', [messageId, organizationId]);
  return rows.length > 0;
}

/** true: this step took effect; false: refused; null: no such request (for this organization). */
export type StepResult = boolean | null;

/**
 * C1. Only an open, unclaimed request is claimed. Concurrent claims queue on the row lock and each
 * re-checks the condition on the row as the previous one committed it: exactly one succeeds.
 */
export async function claim(db: Db, organizationId: number, messageId: string, staff: Staff, tokenId: number, now: Date): Promise<StepResult> {
  const rows = await db.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_claimed = true, claimed_at = $3, claimed_by = $4, claimed_by_user_id = $5, claimed_from = $6, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_claimed AND NOT is_closed
       RETURNING id
     )
     INSERT INTO cfh_request_events (${EVENT_COLUMNS})
     SELECT id, 'claimed', $3, $7, $4, $5, $8, $6, NULL FROM r
     RETURNING request_id`,
    [messageId, organizationId, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId],
  );
  if (rows.length > 0) return true;
  return (await exists(db, organizationId, messageId)) ? false : null;
}

/** C3. Any open request can be completed (by whoever helped the customer); a closed one cannot. */
export async function complete(
  db: Db, organizationId: number, messageId: string, staff: Staff, customerStatus: string, tokenId: number, now: Date,
): Promise<StepResult> {
  const rows = await db.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_completed = true, completed_at = $3, completion_reason = $9, is_closed = true, closed_at = $3, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_closed
       RETURNING id
     )
     INSERT INTO cfh_request_events (${EVENT_COLUMNS})
     SELECT id, 'completed', $3, $7, $4, $5, $8, $6, $9 FROM r
     RETURNING request_id`,
    [messageId, organizationId, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId, customerStatus],
  );
  if (rows.length > 0) return true;
  return (await exists(db, organizationId, messageId)) ? false : null;
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

export async function writeOnTheWay(q: Queryable, id: number, change: { claims: boolean; goes: boolean }, staff: Staff, tokenId: number, now: Date): Promise<void> {
  if (!change.claims && !change.goes) return;
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
       RETURNING id
     )
     INSERT INTO cfh_request_events (${EVENT_COLUMNS})
     SELECT r.id, step.kind, $4, $8, $5, $6, $9, $7, NULL
     FROM r CROSS JOIN (VALUES ('claimed', $2::boolean), ('on_the_way', $3::boolean)) AS step (kind, wanted)
     WHERE step.wanted`,
    [id, change.claims, change.goes, now, staff.name, staff.userId, staff.from, tokenId, staff.channelId],
  );
}

export type CancelResult = { changed: boolean; row: RequestRow } | null;

/**
 * C4. An open request is cancelled (is_claimed false, closed_at and customer_canceled_at the same
 * instant). A closed one is read back as it is, for the caller to judge.
 */
export async function cancel(db: Db, organizationId: number, messageId: string, tokenId: number, now: Date): Promise<CancelResult> {
  const [canceled] = await db.query<RequestRow>(
    `WITH r AS (
       UPDATE cfh_requests SET is_canceled = true, customer_canceled_at = $3, is_closed = true, closed_at = $3, is_claimed = false, updated_at = $3
       WHERE message_id = $1 AND organization_id = $2 AND NOT is_closed
       RETURNING *
     ), ev AS (
       INSERT INTO cfh_request_events (request_id, kind, at, token_id) SELECT id, 'canceled', $3, $4 FROM r
     )
     SELECT ${RECORD_COLUMNS} FROM r`,
    [messageId, organizationId, now, tokenId],
  );
  if (canceled !== undefined) return { changed: true, row: canceled };
  // Closed is final, so what is read now is what refused the update.
  const [current] = await db.query<RequestRow>(
    `SELECT ${RECORD_COLUMNS} FROM cfh_requests r WHERE message_id = $1 AND organization_id = $2`,
    [messageId, organizationId],
  );
  return current === undefined ? null : { changed: false, row: current };
}

/** C5: the request and its option, one indexed read. */
export async function findStatus(db: Db, organizationId: number, messageId: string): Promise<StatusRow | null> {
  const [row] = await db.query<StatusRow>(
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
 * The timeout job. It judges the request as it stood at its deadline, so a late run (the service
 * was down) gives the same answer as a punctual one: timed out if it was open and unclaimed then.
 * It never closes the request: the request stays claimable.
 */
export async function markTimedOut(q: Queryable, requestId: number, deadline: string): Promise<boolean> {
  const rows = await q.query(
    `WITH r AS (
       UPDATE cfh_requests SET is_timeout = true, timeout_at = $2, updated_at = GREATEST(updated_at, $2::timestamptz)
       WHERE id = $1 AND NOT is_timeout
         AND (claimed_at IS NULL OR claimed_at > $2) AND (closed_at IS NULL OR closed_at > $2)
       RETURNING id
     )
     INSERT INTO cfh_request_events (request_id, kind, at) SELECT id, 'timed_out', $2 FROM r
     RETURNING request_id`,
    [requestId, deadline],
  );
  return rows.length > 0;
}

export interface EventRow {
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
export async function listEvents(q: Queryable, organizationId: number, messageId: string): Promise<EventRow[]> {
  return q.query<EventRow>(
    `SELECT e.kind, e.at, e.token_id, e.actor_name, e.actor_user_id, e.channel_id, e.request_from, e.detail
     FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id
     WHERE r.message_id = $1 AND r.organization_id = $2
     ORDER BY e.at, e.id`,
    [messageId, organizationId],
  );
}
