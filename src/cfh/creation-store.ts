// SQL of a request's creation (C0, a call button's press B1, a display's C9): one statement whose
// CTEs are its steps: the location and option checks, the request, its steps in the step log, its
// events and its timers.
import { reachOfSql } from '../access/reach-sql.ts';
import type { Tx } from '../db/db.ts';
import { cte, sql, withCtes, type Sql } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import { foldClosed } from '../reports/figures-store.ts';
import type { RequestRow } from './rows.ts';
import { createdTimers, eventsOf, RECORD_COLUMNS, STEP_COLUMNS } from './sql.ts';

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
  /** C9: the SHA-256 of the customer's browser id, when the page sent one. */
  browserDigest: string | null;
  /** request_from of the created step (call_button for a button's press). */
  requestFrom: string | null;
  /** The service's CFH_TIMEOUT_SECONDS and CFH_ESCALATION_SECONDS, for a location without its own. */
  defaultTimeoutSeconds: number;
  defaultEscalationSeconds: number;
}

export interface InsertResult {
  locationFound: boolean;
  optionFound: boolean;
  /** The call button and display named, each of the request's location (true when none is named). */
  buttonFound: boolean;
  displayFound: boolean;
  /** null when the location or the option did not check out (nothing was written). */
  row: RequestRow | null;
}

/** loc: the request's location, if it is the organization's and among the token's locations. */
const locationOf = (input: NewRequest): Sql =>
  sql`SELECT id, cfh_timeout_seconds, cfh_escalation_seconds, cfh_reminder_seconds FROM locations
    WHERE id = ${input.locationId} AND enabled AND ${reachOfSql(input, sql.raw('locations'), 'id')}`;

/** opt: the option, if the organization's and offered at the location; `records`: it only records (staff_action none). */
const optionOf = (input: NewRequest): Sql => sql`SELECT id, text_en, prompt_en, staff_action, staff_action = 'none' AS records
  FROM cfh_options WHERE id = ${input.optionId} AND enabled AND organization_id = ${input.organizationId} AND (location_id IS NULL OR location_id = ${input.locationId})`;

/** dev: the call button and the display the request names (each NULL when it names none), if each is
 * of the request's location (and so of its organization); no row when one is not. */
const devicesOf = (input: NewRequest): Sql => sql`
  SELECT (SELECT id FROM call_buttons b WHERE b.id = ${input.callbuttonId}::integer AND b.location_id = loc.id AND b.enabled) AS callbutton_id,
    (SELECT id FROM cfh_displays d WHERE d.id = ${input.displayId}::integer AND d.location_id = loc.id AND d.enabled) AS display_id
  FROM loc`;

const devicesFound = (input: NewRequest): Sql => sql`
  SELECT ${input.callbuttonId}::integer IS NULL OR EXISTS (SELECT 1 FROM dev WHERE callbutton_id IS NOT NULL) AS button_found,
    ${input.displayId}::integer IS NULL OR EXISTS (SELECT 1 FROM dev WHERE display_id IS NOT NULL) AS display_found`;

/** r: the request at `loc` for `opt`; an option that only records closes it at once, completed with reason `recorded`. */
const insertRequestRow = (input: NewRequest, at: Sql): Sql => sql`
  INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, device_id, display_id, callbutton_id, chat_channel_id,
    source, custom_text, browser_digest, created_at, updated_at, is_completed, completed_at, completion_reason, is_closed, closed_at)
  SELECT ${input.messageId}, ${input.organizationId}, loc.id, opt.id, ${input.deviceId}::integer, dev.display_id,
    dev.callbutton_id, ${input.chatChannelId}::text, ${input.source}, ${input.customText}::text, ${input.browserDigest}::text, ${at}, ${at},
    opt.records, CASE WHEN opt.records THEN ${at} END, CASE WHEN opt.records THEN 'recorded' END,
    opt.records, CASE WHEN opt.records THEN ${at} END
  FROM loc, opt, dev, found WHERE found.button_found AND found.display_found
  RETURNING *`;

/** steps: `created`, and `completed` for an option that only records, each with its event's lead. */
const creationSteps = (leads: { created: string; completed: string }): Sql => sql`
  SELECT 'created' AS kind, ${leads.created}::text AS lead, NULL AS detail UNION ALL
  SELECT 'completed', ${leads.completed}::text, 'recorded' FROM opt WHERE opt.records`;

/** step: the new request's `steps` in its step log. */
const logCreationSteps = (input: NewRequest, at: Sql): Sql => sql`
  INSERT INTO cfh_request_events (${STEP_COLUMNS})
  SELECT r.id, steps.kind, ${at}, ${input.tokenId}, NULL, NULL, NULL, ${input.requestFrom}, steps.detail FROM r CROSS JOIN steps`;

/**
 * C0, B1 and C9 in one statement: the location and option checks, the request, its steps, its
 * events and its timers (timeout, escalation, first reminder). An option whose staff_action is
 * `none` is recorded and closed at once as completed with reason `recorded`, and starts no timer.
 */
export async function insertRequest(q: Tx, input: NewRequest, leads: { created: string; completed: string }, now: Date): Promise<InsertResult> {
  const at = sql`${now}::timestamptz`;
  const [result] = await q.run<RequestRow & { location_found: boolean; option_found: boolean; button_found: boolean; display_found: boolean }>(
    withCtes(
      [
        cte('loc', locationOf(input)),
        cte('opt', optionOf(input)),
        cte('dev', devicesOf(input)),
        cte('found', devicesFound(input)),
        cte('r', insertRequestRow(input, at)),
        // An option that only records closes its request at once: it is folded into P1's figures.
        ...foldClosed('r'),
        cte('steps', creationSteps(leads)),
        cte('step', logCreationSteps(input, at)),
        cte(
          'ev',
          insertEvents(
            eventsOf({
              status: sql`steps.kind`,
              lead: sql`steps.lead`,
              requestFrom: sql`${input.requestFrom}::text`,
              at,
              from: sql`r JOIN opt o ON o.id = r.option_id CROSS JOIN steps`,
            }),
          ),
        ),
        cte('job', createdTimers(now, { timeoutSeconds: input.defaultTimeoutSeconds, escalationSeconds: input.defaultEscalationSeconds })),
      ],
      sql`SELECT EXISTS (SELECT 1 FROM loc) AS location_found, EXISTS (SELECT 1 FROM opt) AS option_found,
          found.button_found, found.display_found, ${sql.raw(RECORD_COLUMNS)}
        FROM found LEFT JOIN r ON true`,
    ),
  );
  if (result === undefined) throw new Error('the insert of a CFH request returned no row');
  const { location_found, option_found, button_found, display_found, ...row } = result;
  return {
    locationFound: location_found,
    optionFound: option_found,
    buttonFound: button_found,
    displayFound: display_found,
    row: row.id === null ? null : row,
  };
}
