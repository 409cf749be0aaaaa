// SQL of Call for Help's steps. Each step is one statement where it can be: the change, its line in
// the request's step log (cfh_request_events), its event in the event log and the timers it starts
// or ends, in one round trip, built from named CTE fragments (sql.ts and the steps below). Every
// lookup is by the unique message_id within the actor's reach (access/reach-sql.ts), so a request of
// another organization is indistinguishable from none.
import type { Actor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes, type Sql } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import { foldClosed } from '../reports/figures-store.ts';
import type { OnTheWayState, Staff } from './rules.ts';
import type { RequestRow, StatusRow } from './rows.ts';
import { CHANGED, claimTimers, endAllTimers, endUnclaimedTimers, eventsOf, RECORD_COLUMNS, requiresScan, STEP_COLUMNS } from './sql.ts';

// A request's creation is in creation-store.ts; its callers reach it here, with the other steps.
export { insertRequest, type InsertResult, type NewRequest } from './creation-store.ts';

const RECORD = sql.raw(RECORD_COLUMNS);

/** Whether the actor reaches a request of this message_id (what a refused step asks). */
export async function exists(q: Queryable, actor: Actor, messageId: string): Promise<boolean> {
  const rows = await q.run(sql`SELECT 1 FROM cfh_requests r WHERE message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))}`);
  return rows.length > 0;
}

/** step: a staff member's step (`kind`, with `detail`) of each row of `from` (its request `r`). */
const logStaffStep = (kind: Sql, at: Sql, staff: Staff, tokenId: number | null, detail: Sql, from: Sql = sql`r`): Sql => sql`
  INSERT INTO cfh_request_events (${STEP_COLUMNS})
  SELECT r.id, ${kind}, ${at}, ${tokenId}, ${staff.name}, ${staff.userId}, ${staff.channelId}, ${staff.from}, ${detail} FROM ${from}`;

/**
 * C1: true if it claimed. Only an open, unclaimed request is claimed. Concurrent claims, and a
 * claim racing the timeout, queue on the row lock and each re-checks the condition on the row as
 * the previous one committed it: exactly one succeeds. The claim ends the escalation and timeout
 * timers and starts automatic completion and the claimed reminders.
 */
export async function claim(q: Tx, actor: Actor, messageId: string, staff: Staff, tokenId: number | null, lead: string, now: Date): Promise<boolean> {
  const at = sql`${now}::timestamptz`;
  const rows = await q.run(
    withCtes(
      [
        cte(
          'r',
          sql`UPDATE cfh_requests r SET is_claimed = true, claimed_at = ${at}, claimed_by = ${staff.name}, claimed_by_user_id = ${staff.userId},
            claimed_from = ${staff.from}, updated_at = ${at}
          WHERE message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))} AND NOT is_claimed AND NOT is_closed
          RETURNING ${CHANGED}`,
        ),
        cte('step', logStaffStep(sql`'claimed'`, at, staff, tokenId, sql`NULL`)),
        cte('ev', insertEvents(eventsOf({ status: sql`'claimed'`, lead: sql`${lead}::text`, requestFrom: sql`${staff.from}::text`, at }))),
        cte('ended', endUnclaimedTimers(at)),
        cte('timers', claimTimers(now)),
      ],
      sql`SELECT id FROM r`,
    ),
  );
  return rows.length > 0;
}

export interface CompleteResult {
  found: boolean;
  /** false: the location has outcomes and the reason is none of their keys (nothing changed). */
  outcomeOk: boolean;
  /** true: the request must be scanned first and was not (nothing changed when `scanFirst`). */
  scanMissing: boolean;
  completed: boolean;
}

/**
 * C3 (and B2): completes an open request (by whoever helped the customer). When `checkOutcome`
 * and the location has outcomes, the reason must be one of their keys. `onlyButton` limits it to
 * a button's own requests. `scanFirst` refuses a request that must be scanned (section 19) and was not.
 */
export async function complete(
  q: Tx,
  actor: Actor,
  messageId: string,
  staff: Staff,
  reason: string,
  tokenId: number | null,
  lead: string,
  now: Date,
  opts: { checkOutcome: boolean; onlyButton?: number; scanFirst?: boolean },
): Promise<CompleteResult> {
  const at = sql`${now}::timestamptz`;
  const outcomeOk = opts.checkOutcome
    ? sql`NOT EXISTS (SELECT 1 FROM cfh_outcomes x WHERE x.location_id = c.location_id)
        OR EXISTS (SELECT 1 FROM cfh_outcomes x WHERE x.location_id = c.location_id AND x.key = ${reason})`
    : sql`true`;
  const button = opts.onlyButton === undefined ? sql.empty : sql` AND c.callbutton_id = ${opts.onlyButton}::int`;
  const [row] = await q.run<CompleteResult>(
    withCtes(
      [
        cte(
          't',
          sql`SELECT c.id, ${outcomeOk} AS outcome_ok, (c.employee_arrived_at IS NULL AND ${sql.raw(requiresScan('c'))}) AS scan_missing
            FROM cfh_requests c WHERE c.message_id = ${messageId} AND ${reachSql(actor, sql.raw('c'))}${button}`,
        ),
        cte(
          'r',
          sql`UPDATE cfh_requests c SET is_completed = true, completed_at = ${at}, completion_reason = ${reason}, is_closed = true, closed_at = ${at},
            updated_at = ${at}
          FROM t WHERE c.id = t.id AND t.outcome_ok AND NOT c.is_closed AND NOT (t.scan_missing AND ${opts.scanFirst === true})
          RETURNING c.*`,
        ),
        ...foldClosed('r'),
        cte('step', logStaffStep(sql`'completed'`, at, staff, tokenId, sql`${reason}`)),
        cte('ev', insertEvents(eventsOf({ status: sql`'completed'`, lead: sql`${lead}::text`, requestFrom: sql`${staff.from}::text`, at }))),
        cte('ended', endAllTimers(at)),
      ],
      sql`SELECT EXISTS (SELECT 1 FROM t) AS found, coalesce((SELECT outcome_ok FROM t), true) AS "outcomeOk",
        coalesce((SELECT scan_missing FROM t), false) AS "scanMissing", EXISTS (SELECT 1 FROM r) AS completed`,
    ),
  );
  if (row === undefined) throw new Error('the completion of a CFH request returned no row');
  return row;
}

/** C2's transaction: the request locked, so the decision holds until it is written. */
export async function lockForOnTheWay(q: Queryable, actor: Actor, messageId: string): Promise<(OnTheWayState & { id: number }) | null> {
  const [row] = await q.run<OnTheWayState & { id: number }>(
    sql`SELECT id, is_closed, is_claimed, is_on_the_way, claimed_by_user_id, claimed_from FROM cfh_requests r
     WHERE message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))} FOR UPDATE`,
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
  const at = sql`${now}::timestamptz`;
  const claimedBy = change.claims
    ? sql`claimed_at = ${at}, claimed_by = ${staff.name}, claimed_by_user_id = ${staff.userId}, claimed_from = ${staff.from},`
    : sql.empty;
  const goes = change.goes ? sql`staff_on_the_way_at = ${at},` : sql.empty;
  await q.run(
    withCtes(
      [
        cte(
          'r',
          sql`UPDATE cfh_requests SET is_claimed = true, ${claimedBy} is_on_the_way = true, ${goes} updated_at = ${at} WHERE id = ${id} RETURNING ${CHANGED}`,
        ),
        cte(
          'steps',
          sql`SELECT kind, lead FROM (VALUES ('claimed', ${change.claims}::boolean, ${leads.claimed}::text), ('on_the_way', ${change.goes}::boolean, ${leads.onTheWay}::text))
            AS s (kind, wanted, lead) WHERE wanted`,
        ),
        cte('step', logStaffStep(sql`steps.kind`, at, staff, tokenId, sql`NULL`, sql`r CROSS JOIN steps`)),
        cte(
          'ev',
          insertEvents(
            eventsOf({
              status: sql`steps.kind`,
              lead: sql`steps.lead`,
              requestFrom: sql`${staff.from}::text`,
              at,
              from: sql`r JOIN cfh_options o ON o.id = r.option_id CROSS JOIN steps`,
            }),
          ),
        ),
        cte('ended', endUnclaimedTimers(at)),
        cte('timers', claimTimers(now)),
      ],
      sql`SELECT id FROM r`,
    ),
  );
}

/**
 * C4 (and B2): the request, if it was open and is now cancelled (is_claimed false, closed_at and
 * customer_canceled_at the same instant); null if nothing changed.
 */
export async function cancel(
  q: Tx,
  actor: Actor,
  messageId: string,
  tokenId: number | null,
  lead: string,
  now: Date,
  opts: { onlyButton?: number; requestFrom?: string } = {},
): Promise<RequestRow | null> {
  const at = sql`${now}::timestamptz`;
  const requestFrom = sql`${opts.requestFrom ?? null}::text`;
  const button = opts.onlyButton === undefined ? sql.empty : sql` AND callbutton_id = ${opts.onlyButton}::int`;
  const [canceled] = await q.run<RequestRow>(
    withCtes(
      [
        cte(
          'r',
          sql`UPDATE cfh_requests r SET is_canceled = true, customer_canceled_at = ${at}, is_closed = true, closed_at = ${at}, is_claimed = false,
            updated_at = ${at}
          WHERE message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))} AND NOT is_closed${button}
          RETURNING *`,
        ),
        ...foldClosed('r'),
        cte(
          'step',
          sql`INSERT INTO cfh_request_events (request_id, kind, at, token_id, request_from) SELECT id, 'canceled', ${at}, ${tokenId}, ${requestFrom} FROM r`,
        ),
        cte('ev', insertEvents(eventsOf({ status: sql`'cancelled'`, lead: sql`${lead}::text`, requestFrom, at }))),
        cte('ended', endAllTimers(at)),
      ],
      sql`SELECT ${RECORD} FROM r`,
    ),
  );
  return canceled ?? null;
}

export async function findRecord(q: Queryable, actor: Actor, messageId: string): Promise<RequestRow | null> {
  const [row] = await q.run<RequestRow>(sql`SELECT ${RECORD} FROM cfh_requests r WHERE message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))}`);
  return row ?? null;
}

/** C5: the request, its option and its location's name format, one indexed read. */
export async function findStatus(q: Queryable, actor: Actor, messageId: string): Promise<StatusRow | null> {
  const [row] = await q.run<StatusRow>(
    sql`SELECT r.id AS request_id, r.device_id, r.location_id, r.organization_id, r.message_id, r.option_id, r.is_claimed, r.claimed_at, r.claimed_by,
       r.created_at, r.updated_at, r.is_timeout, r.timeout_at, r.is_closed, r.closed_at, r.is_on_the_way, r.staff_on_the_way_at,
       r.is_completed, r.is_canceled, r.customer_canceled_at, r.source, r.is_escalated, r.escalated_at, r.chat_channel_id, r.custom_text,
       r.employee_arrived_at, ${sql.raw(requiresScan('r'))} AS require_scan,
       o.text_en AS option_text_en, o.text_fr AS option_text_fr, o.prompt_en AS option_prompt_en, o.prompt_fr AS option_prompt_fr,
       o.organization_id AS option_organization_id, o.location_id AS option_location_id,
       o.created_at AS option_created_at, o.updated_at AS option_updated_at,
       coalesce(l.staff_name_format, 'full') AS staff_name_format, coalesce(l.language, 'en') AS language,
       l.name AS store_name
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id JOIN locations l ON l.id = r.location_id
     WHERE r.message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))}`,
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
