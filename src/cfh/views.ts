// The wire formats of Call for Help: the seed's request record (C0, C4) and status view (C5).
import { sqlSeconds } from '../db/timestamps.ts';
import { DEFAULT_STAFF_ACTION, type CfhRequestRecord, type CfhStatusView } from './schemas.ts';
import type { RequestRow, StatusRow } from './rows.ts';
import { staffNameFor, statusOf } from './rules.ts';

/** The seed's CFH request record: is_completed 0/1, closed_at and customer_canceled_at in seconds. */
export function toRecord(row: RequestRow): CfhRequestRecord {
  return {
    id: row.id,
    device_id: row.device_id,
    is_claimed: row.is_claimed,
    claimed_at: row.claimed_at,
    claimed_by: row.claimed_by,
    organization_id: row.organization_id,
    location_id: row.location_id,
    option_id: row.option_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    chat_channel_id: row.chat_channel_id,
    message_id: row.message_id,
    is_timeout: row.is_timeout,
    timeout_at: row.timeout_at,
    is_closed: row.is_closed,
    closed_at: sqlSeconds(row.closed_at),
    is_on_the_way: row.is_on_the_way,
    staff_on_the_way_at: row.staff_on_the_way_at,
    completed_at: row.completed_at,
    is_completed: row.is_completed ? 1 : 0,
    completion_reason: row.completion_reason,
    is_canceled: row.is_canceled,
    customer_canceled_at: sqlSeconds(row.customer_canceled_at),
    display_id: row.display_id,
    callbutton_id: row.callbutton_id,
    status: statusOf(row),
    is_escalated: row.is_escalated,
    escalated_at: row.escalated_at,
    source: row.source,
    teams_channel_id: row.chat_channel_id,
  };
}

/** C7's entry: the record and its option's staff_action. */
export function toListedRecord(row: RequestRow): CfhRequestRecord & { staff_action: NonNullable<RequestRow['staff_action']> } {
  return { ...toRecord(row), staff_action: row.staff_action ?? DEFAULT_STAFF_ACTION };
}

/** B2's answer: the record with the status view's arrival fields. */
export function toButtonRecord(row: RequestRow) {
  return { ...toRecord(row), employee_has_arrived: row.is_on_the_way, employee_arrived_at: row.staff_on_the_way_at };
}

/**
 * The seed's status view (C5): what a customer's page polls. A customer (no token) sees the
 * claimer's name in the location's staff_name_format; staff with a token see it in full.
 */
export function toStatusView(row: StatusRow, viewer: 'staff' | 'customer' = 'staff'): CfhStatusView {
  // A customer never sees which device or chat channel the store routes the request through.
  const staff = viewer === 'staff';
  return {
    device_id: staff ? row.device_id : null,
    option: {
      id: row.option_id,
      text_en: row.option_text_en,
      text_fr: row.option_text_fr,
      prompt_en: row.option_prompt_en,
      prompt_fr: row.option_prompt_fr,
      organization_id: row.option_organization_id,
      location_id: row.option_location_id,
      created_at: row.option_created_at,
      updated_at: row.option_updated_at,
    },
    location_id: row.location_id,
    message_id: row.message_id,
    cfh_request: {
      option_id: row.option_id,
      is_claimed: row.is_claimed,
      claimed_at: row.claimed_at,
      claimed_by: staff ? row.claimed_by : staffNameFor(row.claimed_by, row.staff_name_format),
      location_id: row.location_id,
      organization_id: row.organization_id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      is_timeout: row.is_timeout,
      timeout_at: row.timeout_at,
      is_closed: row.is_closed,
      closed_at: sqlSeconds(row.closed_at),
      is_on_the_way: row.is_on_the_way,
      staff_on_the_way_at: row.staff_on_the_way_at,
      is_canceled: row.is_canceled,
      customer_canceled_at: sqlSeconds(row.customer_canceled_at),
      // Deployed clients read arrival from on-the-way; a request that must be scanned (section 19)
      // has arrived when its scan was right.
      employee_has_arrived: row.require_scan ? row.employee_arrived_at !== null : row.is_on_the_way,
      employee_arrived_at: row.require_scan ? row.employee_arrived_at : row.staff_on_the_way_at,
      status: statusOf(row),
      is_escalated: row.is_escalated,
      escalated_at: row.escalated_at,
      source: row.source,
      teams_channel_id: staff ? row.chat_channel_id : null,
    },
    show_survey: row.is_completed,
  };
}
