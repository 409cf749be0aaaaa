// The locker feature's vocabulary: the rows its store returns and the changes it is asked to write,
// and the dependencies its use cases are given (no more than the database and the clock).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import type { CABINET_COMMANDS, THERMAL_MODES } from './schemas.ts';

export interface LockerDeps {
  db: Db;
  clock: Clock;
}

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
  pickup_deadline: string | null;
  ready_at: string | null;
  expired_at: string | null;
  /** Pickup reminders sent so far; names the order's pending pickup job. */
  reminders: number;
}

export type OrderStatus = 'open' | 'ready' | 'completed' | 'canceled' | 'expired';

/** An order as its pickup job sees it, locked, with its location's reminder interval. */
export interface PickupTarget {
  id: number;
  created_at: string;
  pickup_deadline: string;
  reminders: number;
  reminder_hours: number;
}

/** Who may act on an order by its row id (L8, L9): the ids the caller says it belongs to. */
export interface OrderScope {
  organization_id?: number;
  location_id?: number;
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

/** L3's cabinet, locked, with what its command is checked against. */
export interface CommandTarget extends CabinetRow {
  rear_loading_available: boolean;
  /** order_id of the cabinet's latest order (the one occupying it, when it is occupied). */
  current_order_id: number | null;
}

// What the store is asked to write.

export interface NewOrder {
  orderId: number;
  cabinetId: number;
  lockerId: number;
  organizationId: number;
  locationId: number;
  rearload: boolean;
  openCode: string;
}

export interface CreateOutcome {
  /** The cabinet as the request names it, or undefined when there is no such cabinet. */
  target: OrderTarget | undefined;
  /** The new order, when one was made. */
  created: CreatedOrderRow | undefined;
}

export interface Completion {
  completedBy: number | null;
  completedDeviceId: number | null;
  /** End of the cool-off, or null to release the cabinet now. */
  coolOffUntil: Date | null;
}

export interface CabinetChange {
  /** The cabinet by id (staff, locked earlier in the transaction), or the cabinet of the open
   * order with this code (a customer's agree, recorded on the order in the same statement). */
  target: { cabinetId: number } | { openCode: string };
  commandId: string;
  command: CabinetCommand;
  door: Door;
  source: 'staff' | 'customer';
  actedBy: number | null;
  /** Logged with the command; null: the order of the code, for a customer. */
  orderId: string | null;
  reason: string | null;
  /** What the command sets now; null: left as it is. */
  size: string | null;
  thermalMode: ThermalMode | null;
  enabled: boolean | null;
  doorState: DoorState | null;
  /** A door command overtakes a delayed close still waiting on its door. */
  overtakes: boolean;
  /** Logged as asked. */
  delaySeconds: number | null;
  runAt: Date;
  /** Carried out later (by the delayed-close job), not now. */
  delayed: boolean;
}

export interface StatusReport {
  lockerId: number;
  keys: number[];
  front: (DoorState | null)[];
  rear: (DoorState | null)[];
  ip: string | null;
  firmware: string | null;
  eventType: string | null;
  event: Record<string, unknown> | null;
}
