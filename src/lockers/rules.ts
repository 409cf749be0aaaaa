// The locker rules as plain functions: which order creation is refused and why, what a cabinet
// command needs and changes, what a device report may carry, and the names of delayed work.
import { sql, type Sql } from '../db/sql.ts';
import { AppError, type FieldErrors } from '../http/errors.ts';
import type { CabinetCommand, Door, DoorState, OrderRecordRow, OrderScope, OrderStatus, OrderTarget, ThermalMode } from './types.ts';

export const DELAYED_CLOSE_JOB = 'lockers.delayed_close';
export const COOL_OFF_END_JOB = 'lockers.cool_off_end';
/** One pending delayed close per door of a cabinet. */
export const delayedCloseKey = (cabinetId: number, door: Door) => `lockers:close:${cabinetId}:${door}`;
/** delayedCloseKey in SQL (cabinetId, door: SQL expressions). */
export const delayedCloseKeySql = (cabinetId: Sql, door: Sql): Sql => sql`'lockers:close:' || ${cabinetId} || ':' || ${door}`;
/** One pending cool-off end per cabinet. */
export const coolOffKey = (cabinetId: number) => `lockers:cool-off:${cabinetId}`;
/** An order's next pickup reminder, or its deadline. */
export const PICKUP_JOB = 'lockers.pickup';
/** The pickup job of an order after `step` reminders: a job never re-keys itself while it runs. */
export const pickupKey = (orderId: number, step: number) => `lockers:pickup:${orderId}:${step}`;

const HOUR_MS = 3_600_000;

/** An order's status: an ended order is completed or canceled; a bound one expired, ready or open. */
export function orderStatus(o: Pick<OrderRecordRow, 'canceled_at' | 'completed_at' | 'expired_at' | 'ready_at'>): OrderStatus {
  if (o.canceled_at !== null) return 'canceled';
  if (o.completed_at !== null) return 'completed';
  if (o.expired_at !== null) return 'expired';
  if (o.ready_at !== null) return 'ready';
  return 'open';
}

/** When the pickup job after `step` reminders runs: the next reminder, unless it would not come
 * before the deadline, then the deadline. */
export function nextPickupRun(createdAt: Date, deadline: Date, reminderHours: number, step: number): Date {
  const reminder = createdAt.getTime() + (step + 1) * reminderHours * HOUR_MS;
  return reminder < deadline.getTime() ? new Date(reminder) : deadline;
}

/** L8 / L9 on an order that has ended (409), or null. */
export function endedOrderRefusal(o: Pick<OrderRecordRow, 'id' | 'canceled_at' | 'completed_at'>, operation: string): AppError | null {
  if (o.completed_at !== null) return new AppError(409, 'order_completed', `order ${o.id} is completed: it cannot ${operation}`);
  if (o.canceled_at !== null) return new AppError(409, 'order_canceled', `order ${o.id} is canceled: it cannot ${operation}`);
  return null;
}

/** L8 / L9: an order outside the organization or location the caller names is not theirs to see. */
export function outsideScope(o: Pick<OrderRecordRow, 'organization_id' | 'location_id'>, scope: OrderScope): boolean {
  return (
    (scope.organization_id !== undefined && scope.organization_id !== o.organization_id) ||
    (scope.location_id !== undefined && scope.location_id !== o.location_id)
  );
}

export interface CreateOrderRequest {
  rearload: boolean;
  locker_id: number;
  cabinet_id: number;
  order_id: number;
  organization_id: number;
  location_id: number;
}

function invalidFields(errors: FieldErrors): AppError {
  const [field, problems] = Object.entries(errors)[0] ?? ['(root)', ['is invalid']];
  return new AppError(422, 'validation_failed', `${field}: ${problems.join(', ')}`, { errors });
}

/** L2's 422s: the ids must belong together, and rear loading must exist when asked for. */
export function orderMismatch(req: CreateOrderRequest, target: OrderTarget | undefined): AppError | null {
  if (target === undefined) {
    return invalidFields({ cabinet_id: ['no such cabinet'] });
  }
  const errors: FieldErrors = {};
  if (target.locker_id !== req.locker_id) errors.locker_id = [`cabinet ${req.cabinet_id} is not in locker ${req.locker_id}`];
  if (target.location_id !== req.location_id) errors.location_id = [`the cabinet's locker is not at location ${req.location_id}`];
  if (target.organization_id !== req.organization_id) errors.organization_id = [`the cabinet's locker is not of organization ${req.organization_id}`];
  if (req.rearload && !target.rear_loading_available) errors.rearload = ['the locker has no rear loading'];
  return Object.keys(errors).length > 0 ? invalidFields(errors) : null;
}

/** Why an order whose insertion did nothing was refused (409), or null if nothing refuses it now. */
export function orderRefusal(target: OrderTarget, openOrder: OrderRecordRow | undefined): AppError | null {
  if (!target.enabled) return new AppError(409, 'cabinet_disabled', `cabinet ${target.cabinet_id} is disabled`);
  if (target.cooling) return new AppError(409, 'cabinet_cooling_off', `cabinet ${target.cabinet_id} is cooling off after its last order`);
  if (openOrder !== undefined) return new AppError(409, 'cabinet_occupied', `cabinet ${target.cabinet_id} already has an open order`);
  return null;
}

/** An identical creation repeated while its order is still open gets that order back. */
export function isReplay(req: CreateOrderRequest, openOrder: OrderRecordRow | undefined): openOrder is OrderRecordRow {
  return openOrder !== undefined && openOrder.order_id === req.order_id && openOrder.rearload === req.rearload;
}

/** The cool-off of a completion: its end, or null to release the cabinet now. */
export function coolOffEnd(now: Date, delaySeconds: number | null | undefined): Date | null {
  return typeof delaySeconds === 'number' && delaySeconds > 0 ? new Date(now.getTime() + delaySeconds * 1000) : null;
}

export interface CabinetCommandRequest {
  command: CabinetCommand;
  acted_by?: number | null;
  size?: string | null;
  thermal_mode?: ThermalMode | null;
  order_id?: string | number | null;
  reason?: string | null;
  rearload?: boolean;
  delay?: number | null;
}

export interface CommandContext {
  occupied: boolean;
  rearLoadingAvailable: boolean;
  /** order_id of the order occupying the cabinet. */
  currentOrderId: number | null;
}

const present = (s: string | null | undefined): s is string => typeof s === 'string' && s.trim() !== '';

/** L3's 422s: what each command needs, and what an occupied cabinet asks of open and disable. */
export function commandProblems(req: CabinetCommandRequest, ctx: CommandContext): AppError | null {
  const errors: FieldErrors = {};
  if (req.command === 'resize' && !present(req.size)) errors.size = ['is required for resize'];
  if (req.command === 'set_thermal_mode' && (req.thermal_mode ?? null) === null) errors.thermal_mode = ['is required for set_thermal_mode'];
  if (isDoorCommand(req.command) && req.rearload === true && !ctx.rearLoadingAvailable) errors.rearload = ['the locker has no rear loading'];
  if (ctx.occupied) {
    if ((req.command === 'open' || req.command === 'disable') && !present(req.reason)) {
      errors.reason = [`is required to ${req.command} an occupied cabinet`];
    }
    const given = req.order_id ?? null;
    if (given !== null && given !== '' && String(given).trim() !== String(ctx.currentOrderId)) {
      errors.order_id = ['is not the order occupying the cabinet'];
    }
  }
  return Object.keys(errors).length > 0 ? invalidFields(errors) : null;
}

export function isDoorCommand(command: CabinetCommand): command is 'open' | 'close' {
  return command === 'open' || command === 'close';
}

/** The door a command acts on; commands that are not about a door are sent as front. */
export function doorOf(req: Pick<CabinetCommandRequest, 'command' | 'rearload'>): Door {
  return isDoorCommand(req.command) && req.rearload === true ? 'rear' : 'front';
}

/** A close with a positive delay waits for the scheduler; everything else acts now. */
export function delayedCloseSeconds(req: Pick<CabinetCommandRequest, 'command' | 'delay'>): number | null {
  return req.command === 'close' && typeof req.delay === 'number' && req.delay > 0 ? req.delay : null;
}

/** What a command changes on its cabinet now (null: left as it is); a delayed close changes nothing yet. */
export function commandEffect(command: CabinetCommand, opts: { delayed: boolean; size: string | null; thermalMode: ThermalMode | null }) {
  const doorState: DoorState | null = command === 'open' ? 'open' : command === 'close' && !opts.delayed ? 'closed' : null;
  return {
    doorState,
    enabled: command === 'enable' ? true : command === 'disable' ? false : null,
    size: command === 'resize' ? opts.size : null,
    thermalMode: command === 'set_thermal_mode' ? opts.thermalMode : null,
  };
}

/** An open code is URL-safe base64; anything else cannot be one (and is not looked up). */
export const looksLikeOpenCode = (code: string): boolean => /^[A-Za-z0-9_-]{1,100}$/.test(code);

/** L7 is for version 2 lockers; a 422 always says what is wrong by field: here the locker's version. */
export function unsupportedVersion(version: number): AppError | null {
  if (version === 2) return null;
  return new AppError(422, 'unsupported_locker_version', `the status update is for version 2 lockers; this locker is version ${version}`, {
    errors: { version: [`is ${version}; the status update is for version 2 lockers`] },
  });
}

/** L7: a key reported twice in one report is ambiguous; errors by field, or null. */
export function repeatedKeys(cabinets: readonly { key: number }[]): FieldErrors | null {
  const seen = new Map<number, number>();
  const errors: FieldErrors = {};
  cabinets.forEach((c, i) => {
    const first = seen.get(c.key);
    if (first !== undefined) errors[`cabinets[${i}].key`] = [`repeats cabinets[${first}]`];
    else seen.set(c.key, i);
  });
  return Object.keys(errors).length > 0 ? errors : null;
}

/** L7: an entry that reports neither door says nothing of its cabinet (contract section 5,
 * version 3: null or absent is "not reported", and an entry with neither is refused); errors by
 * field, or null. */
export function silentEntries(cabinets: readonly { front_status?: string | null; rear_status?: string | null }[]): FieldErrors | null {
  const errors: FieldErrors = {};
  cabinets.forEach((c, i) => {
    if ((c.front_status ?? null) === null && (c.rear_status ?? null) === null) errors[`cabinets[${i}]`] = ['reports neither front_status nor rear_status'];
  });
  return Object.keys(errors).length > 0 ? errors : null;
}

/** L7: the reported keys the locker does not have, by field. */
export function unknownKeys(cabinets: readonly { key: number }[], unknown: readonly number[]): FieldErrors {
  const errors: FieldErrors = {};
  cabinets.forEach((c, i) => {
    if (unknown.includes(c.key)) errors[`cabinets[${i}].key`] = [`this locker has no cabinet with key ${c.key}`];
  });
  return errors;
}

/** A refused L7 report: nothing of it was applied. */
export function invalidReport(errors: FieldErrors): AppError {
  const [field, problems] = Object.entries(errors)[0] ?? ['cabinets', ['is invalid']];
  return new AppError(422, 'validation_failed', `${field}: ${problems.join(', ')}; nothing was applied`, { errors });
}

/** How deep a locker's event may nest: a device's details are a few levels at most. */
export const MAX_EVENT_DEPTH = 32;

/**
 * Why a JSON value cannot be kept as jsonb, or null: PostgreSQL refuses the NUL character and the
 * escape of a lone surrogate, and its parser gives up on deep nesting (an error that would be a
 * 500). Walked without recursion, since a 1 MiB body can nest far deeper than the call stack.
 */
export function unstorableJson(value: unknown, maxDepth = MAX_EVENT_DEPTH): string | null {
  const textProblem = (s: string) =>
    s.includes('\u0000') ? 'must not contain the NUL character' : s.isWellFormed() ? null : 'must be valid Unicode text (it holds a lone surrogate)';
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop() as { value: unknown; depth: number };
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem !== null) return problem;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) return `must not nest deeper than ${maxDepth} levels`;
    for (const [k, child] of Object.entries(v)) {
      const problem = Array.isArray(v) ? null : textProblem(k);
      if (problem !== null) return problem;
      stack.push({ value: child, depth: depth + 1 });
    }
  }
  return null;
}
