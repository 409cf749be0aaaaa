// The rules of a Call for Help request that are not a single SQL predicate. The transitions that
// must hold under concurrency (claim, complete, cancel) are conditional UPDATEs in store.ts; their
// conditions are spelled out there next to the SQL.
import type { FieldErrors } from '../http/errors.ts';
import type { RequestFrom } from './schemas.ts';

/** C0's own checks: the location and the option must be the token's organization's, and the option
 * either for every location of it or for this one. */
export function creationProblems(found: { location: boolean; option: boolean; button: boolean; display: boolean }): FieldErrors | null {
  const errors: FieldErrors = {};
  if (!found.location) errors.location_id = ['is not a location of this organization'];
  if (!found.option) errors.option_id = ['is not a Call for Help option of this organization and location'];
  // Only once the location is known: a button or display is checked against the request's location.
  if (found.location && !found.button) errors.callbutton_id = ['is not a call button of this location'];
  if (found.location && !found.display) errors.display_id = ['is not a display of this location'];
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

/** A step as its event tells it: the staff steps name the employee. */
export type CfhEventStep =
  | { status: 'created' | 'cancelled' | 'timed_out' | 'escalated' | 'reminder' | 'recorded' | 'auto_completed' }
  | { status: 'claimed' | 'on_the_way' | 'arrived' | 'completed'; by: string };

/**
 * The first half of an event's message; the statement that writes the event adds ": " and the
 * option's prompt, which it reads in the same round trip (C0 knows only the option's id).
 */
export function eventLead(step: CfhEventStep): string {
  switch (step.status) {
    case 'created':
      return 'Customer needs help';
    case 'claimed':
      return `${step.by} claimed`;
    case 'on_the_way':
      return `${step.by} is on the way`;
    case 'arrived':
      return `${step.by} arrived`;
    case 'completed':
      return `${step.by} completed`;
    case 'cancelled':
      return 'The customer cancelled';
    case 'timed_out':
      return 'Nobody claimed in time';
    case 'escalated':
      return 'Still waiting for help';
    case 'reminder':
      return 'Reminder';
    case 'recorded':
      return 'Recorded';
    case 'auto_completed':
      return 'Completed without associate feedback';
  }
}

/** A request's status (contract section 10), derived from its flags. */
export type CfhStatus = 'created' | 'escalated' | 'claimed' | 'on_the_way' | 'completed' | 'timed_out' | 'cancelled';

export function statusOf(r: {
  is_canceled: boolean;
  is_completed: boolean;
  is_timeout: boolean;
  is_closed: boolean;
  is_on_the_way: boolean;
  is_claimed: boolean;
  is_escalated: boolean;
}): CfhStatus {
  if (r.is_canceled) return 'cancelled';
  if (r.is_completed) return 'completed';
  if (r.is_timeout && r.is_closed) return 'timed_out';
  if (r.is_on_the_way) return 'on_the_way';
  if (r.is_claimed) return 'claimed';
  if (r.is_escalated) return 'escalated';
  return 'created';
}

export type StaffNameFormat = 'full' | 'first' | 'generic';

/** The claimer's name as a customer sees it (no token): in full, the first name, or "An associate".
 * A first name is what comes before a space, `@`, `.`, `_` or `,`: "Bob.Smith@corp.example" (a
 * chat tool's login) shows "Bob", never the address. */
export function staffNameFor(name: string | null, format: StaffNameFormat): string | null {
  if (name === null) return null;
  if (format === 'generic') return 'An associate';
  if (format === 'first') return name.split(/[\s@._,]+/).find((part) => part !== '') ?? 'An associate';
  return name;
}

export type ReminderPhase = 'unclaimed' | 'claimed';

export interface ReminderState {
  is_closed: boolean;
  is_claimed: boolean;
  is_on_the_way: boolean;
  created_at: string;
  claimed_at: string | null;
  reminder_seconds: number;
  claimed_seconds: number;
  cap_seconds: number;
}

/**
 * A reminder job of a phase, due at `due`: whether it reminds, and when the next one is. A chain
 * stops when its phase is over (the claim starts the claimed chain), when its interval is 0
 * (off), and past the cap (seconds after creation; 0: no cap).
 */
export function decideReminder(state: ReminderState, phase: ReminderPhase, due: Date): { fire: boolean; next: Date | null } {
  const none = { fire: false, next: null };
  if (state.is_closed || state.is_on_the_way) return none;
  if (phase === 'unclaimed' && state.is_claimed) return none;
  if (phase === 'claimed' && !state.is_claimed) return none;
  const interval = phase === 'unclaimed' ? state.reminder_seconds : state.claimed_seconds;
  if (interval <= 0) return none;
  const cap = state.cap_seconds > 0 ? Date.parse(state.created_at) + state.cap_seconds * 1000 : Infinity;
  if (due.getTime() > cap) return none;
  const next = due.getTime() + interval * 1000;
  return { fire: true, next: next > cap ? null : new Date(next) };
}
