// The locker rules as plain functions: which order creation is refused and why, what a cabinet
// command needs, and how rows become the wire views of each operation.
import { AppError, type FieldErrors } from '../http/errors.ts';
import type { CABINET_COMMANDS, THERMAL_MODES } from './schemas.ts';

export type Door = 'front' | 'rear';
export type DoorState = 'open' | 'closed';
export type ThermalMode = (typeof THERMAL_MODES)[number];
export type CabinetCommand = (typeof CABINET_COMMANDS)[number];

export interface CabinetRow {
  id: number;
  key: number;
  created_at: string;
  updated_at: string;
  name: string | null;
  locker_id: number;
  state: DoorState;
  enabled: boolean;
  size: string;
  occupied: boolean;
  released_at: string | null;
  thermal_mode: ThermalMode;
  rear_load_status: DoorState;
  tag: string | null;
  cool_off_until: string | null;
}

export interface CreatedOrderRow {
  id: number;
  order_id: number;
  cabinet_id: number;
  open_code: string;
  locker_id: number;
  organization_id: number;
  location_id: number;
  app_owner_id: number | null;
  created_at: string;
  updated_at: string;
  rearload: boolean;
}

export interface OrderRecordRow extends CreatedOrderRow {
  completed_at: string | null;
  completed_by: number | null;
  completed_device_id: number | null;
  canceled_at: string | null;
  application: string | null;
}

/** The cabinet an order creation names, with what the creation is checked against. */
export interface OrderTarget {
  cabinet_id: number;
  enabled: boolean;
  cooling: boolean;
  locker_id: number;
  location_id: number;
  organization_id: number;
  rear_loading_available: boolean;
}

export interface CreateOrderRequest {
  rearload: boolean;
  locker_id: number;
  cabinet_id: number;
  order_id: number;
  organization_id: number;
  location_id: number;
}

const flag01 = (b: boolean): 0 | 1 => (b ? 1 : 0);

function cabinetCommon(c: CabinetRow) {
  return {
    id: c.id, key: c.key, created_at: c.created_at, updated_at: c.updated_at, name: c.name, locker_id: c.locker_id,
    state: c.state, size: c.size, released_at: c.released_at, thermal_mode: c.thermal_mode,
    rear_load_status: c.rear_load_status, tag: c.tag,
  };
}

/** L3's cabinet: enabled and occupied as 1/0. */
export function commandedCabinetView(c: CabinetRow) {
  return { ...cabinetCommon(c), enabled: flag01(c.enabled), occupied: flag01(c.occupied) };
}

/** L5's cabinet: enabled and occupied as booleans. */
export function customerCabinetView(c: CabinetRow) {
  return { ...cabinetCommon(c), enabled: c.enabled, occupied: c.occupied };
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

export function createdOrderView(o: CreatedOrderRow) {
  return {
    order_id: o.order_id, cabinet_id: o.cabinet_id, open_code: o.open_code, locker_id: o.locker_id,
    organization_id: o.organization_id, location_id: o.location_id, app_owner_id: o.app_owner_id,
    updated_at: o.updated_at, created_at: o.created_at, id: o.id,
  };
}

export function orderRecordView(o: OrderRecordRow) {
  return {
    ...createdOrderView(o),
    completed_at: o.completed_at, completed_by: o.completed_by, completed_device_id: o.completed_device_id,
    canceled_at: o.canceled_at, application: o.application,
  };
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
      errors.order_id = ["is not the order occupying the cabinet"];
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

/** The cool-off of a completion: its end, or null to release the cabinet now. */
export function coolOffEnd(now: Date, delaySeconds: number | null | undefined): Date | null {
  return typeof delaySeconds === 'number' && delaySeconds > 0 ? new Date(now.getTime() + delaySeconds * 1000) : null;
}


function invalidFields(errors: FieldErrors): AppError {
  const [field, problems] = Object.entries(errors)[0] ?? ['(root)', ['is invalid']];
  return new AppError(422, 'validation_failed', `${field}: ${problems.join(', ')}`, { errors });
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

/** An open code is URL-safe base64; anything else cannot be one (and is not looked up). */
export const looksLikeOpenCode = (code: string): boolean => /^[A-Za-z0-9_-]{1,100}$/.test(code);

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
