// The rules of a Call for Help request that are not a single SQL predicate, and its wire formats.
// The transitions that must hold under concurrency (claim, complete, cancel) are conditional
// UPDATEs in store.ts; their conditions are spelled out there next to the SQL.
import type { FieldErrors } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import { sqlSeconds } from '../db/timestamps.ts';
import type { CfhRequestRecord, CfhStatusView, RequestFrom } from './schemas.ts';

/** 128 random bits, URL-safe: it travels in QR codes and customer page links. */
export function newMessageId(): string {
  return randomToken(16);
}

/** C0's own checks: the location and the option must be the token's organization's, and the option
 * either for every location of it or for this one. */
export function creationProblems(found: { location: boolean; option: boolean }): FieldErrors | null {
  const errors: FieldErrors = {};
  if (!found.location) errors.location_id = ['is not a location of this organization'];
  if (!found.option) errors.option_id = ['is not a Call for Help option of this organization and location'];
  return Object.keys(errors).length === 0 ? null : errors;
}

/** The employee acting, as the provider they act from knows them. */
export interface Staff {
  name: string;
  userId: string;
  channelId: string;
  from: RequestFrom;
}

export interface OnTheWayState {
  is_closed: boolean;
  is_claimed: boolean;
  is_on_the_way: boolean;
  claimed_by_user_id: string | null;
  claimed_from: string | null;
}

export type OnTheWayDecision =
  | { allowed: false }
  /** claims: the request was unclaimed and this claims it; goes: it was not on the way yet. */
  | { allowed: true; claims: boolean; goes: boolean };

/**
 * On the way: by the employee who claimed it, or on an open unclaimed request (which it claims).
 * A user id is only unique within its provider, so the claimer is matched on both.
 * Repeating it is a success that changes nothing (the first time stays the time).
 */
export function decideOnTheWay(state: OnTheWayState, staff: Staff): OnTheWayDecision {
  if (state.is_closed) return { allowed: false };
  if (!state.is_claimed) return { allowed: true, claims: true, goes: true };
  const isClaimer = state.claimed_by_user_id === staff.userId && state.claimed_from === staff.from;
  if (!isClaimer) return { allowed: false };
  return { allowed: true, claims: false, goes: !state.is_on_the_way };
}

export type CancelOutcome = 'unchanged' | 'conflict';

/** A cancel that changed nothing: of a cancelled request it returns it as is; of a completed one it
 * is a conflict (the customer was helped). */
export function cancelOfClosed(state: { is_completed: boolean }): CancelOutcome {
  return state.is_completed ? 'conflict' : 'unchanged';
}

/** A cfh_requests row as store.ts selects it (timestamps already in the wire format). */
export interface RequestRow {
  id: number;
  device_id: number | null;
  is_claimed: boolean;
  claimed_at: string | null;
  claimed_by: string | null;
  organization_id: number;
  location_id: number;
  option_id: number;
  created_at: string;
  updated_at: string;
  chat_channel_id: string | null;
  message_id: string;
  is_timeout: boolean;
  timeout_at: string | null;
  is_closed: boolean;
  closed_at: string | null;
  is_on_the_way: boolean;
  staff_on_the_way_at: string | null;
  completed_at: string | null;
  is_completed: boolean;
  completion_reason: string | null;
  is_canceled: boolean;
  customer_canceled_at: string | null;
  display_id: number | null;
  callbutton_id: number | null;
}

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
  };
}

export interface StatusRow {
  device_id: number | null;
  location_id: number;
  organization_id: number;
  message_id: string;
  option_id: number;
  is_claimed: boolean;
  claimed_at: string | null;
  claimed_by: string | null;
  created_at: string;
  updated_at: string;
  is_timeout: boolean;
  timeout_at: string | null;
  is_closed: boolean;
  closed_at: string | null;
  is_on_the_way: boolean;
  staff_on_the_way_at: string | null;
  is_completed: boolean;
  is_canceled: boolean;
  customer_canceled_at: string | null;
  option_text_en: string;
  option_text_fr: string;
  option_prompt_en: string;
  option_prompt_fr: string;
  option_organization_id: number;
  option_location_id: number | null;
  option_created_at: string;
  option_updated_at: string;
}

/** The seed's status view (C5): what a customer's page polls. */
export function toStatusView(row: StatusRow): CfhStatusView {
  return {
    device_id: row.device_id,
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
      claimed_by: row.claimed_by,
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
      // The service has no separate "arrived" step: deployed clients read arrival from on-the-way.
      employee_has_arrived: row.is_on_the_way,
      employee_arrived_at: row.staff_on_the_way_at,
    },
    show_survey: row.is_completed,
  };
}
