// The rules of a Call for Help request that are not a single SQL predicate. The transitions that
// must hold under concurrency (claim, complete, cancel) are conditional UPDATEs in store.ts; their
// conditions are spelled out there next to the SQL.
import type { FieldErrors } from '../http/errors.ts';
import type { RequestFrom } from './schemas.ts';

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

/** The statuses of a request's events (contract section 11 spells "cancelled" with two l's; the
 * request's own step log keeps the seed's "canceled"). */
export type CfhEventStatus = 'created' | 'claimed' | 'on_the_way' | 'completed' | 'cancelled' | 'timed_out';

/** A step as its event tells it: the staff steps name the employee. */
export type CfhEventStep =
  | { status: 'created' | 'cancelled' | 'timed_out' }
  | { status: 'claimed' | 'on_the_way' | 'completed'; by: string };

/**
 * The first half of an event's message; the statement that writes the event adds ": " and the
 * option's prompt, which it reads in the same round trip (C0 knows only the option's id).
 */
export function eventLead(step: CfhEventStep): string {
  switch (step.status) {
    case 'created': return 'Customer needs help';
    case 'claimed': return `${step.by} claimed`;
    case 'on_the_way': return `${step.by} is on the way`;
    case 'completed': return `${step.by} completed`;
    case 'cancelled': return 'The customer cancelled';
    case 'timed_out': return 'Nobody claimed in time';
  }
}
