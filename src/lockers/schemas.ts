// Request and response schemas of the locker operations. The response schemas are the wire
// contract (field sets and flag types per operation) and let Fastify serialize without reflection.
import { Type, type TUnsafe } from 'typebox';

const MAX_INT4 = 2_147_483_647;

/** A row id of ours (a PostgreSQL integer): anything larger cannot exist. */
export const RowId = Type.Integer({ minimum: 1, maximum: MAX_INT4 });
/** A caller's number (order_id, a user id, a device id): any JSON integer that is exact in JavaScript. */
const SAFE = { minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const CallerNumber = Type.Integer(SAFE);
/** Seconds; at most a week, so a typo cannot park a cabinet for years. */
const DELAY = { minimum: 0, maximum: 604_800 };

/** `{ type: [t, 'null'] }` rather than anyOf: the serializer stays a straight line. */
function nullable<T>(type: 'string' | 'integer' | 'boolean', extra: Record<string, unknown> = {}): TUnsafe<T | null> {
  return Type.Unsafe<T | null>({ type: [type, 'null'], ...extra });
}
/** A string enum as one `enum` keyword, so a wrong value gets one clear error, not one per literal. */
function oneOf<T extends string>(values: readonly T[]): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values] });
}
function oneOfOrNull<T extends string>(values: readonly T[]): TUnsafe<T | null> {
  return Type.Unsafe<T | null>({ type: ['string', 'null'], enum: [...values, null] });
}
const NullableInteger = nullable<number>('integer');
const NullableCallerNumber = nullable<number>('integer', SAFE);
const NullableDelay = nullable<number>('integer', { ...DELAY, description: 'seconds' });
const NullableString = nullable<string>('string');
const Timestamp = Type.String({ description: 'UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ' });
const NullableTimestamp = nullable<string>('string', { description: 'UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ, or null' });
/** Text we store: PostgreSQL text cannot hold the NUL character, so it is refused up front (422). */
const STORABLE = { pattern: '^[^\\u0000]*$' };
const Flag01 = Type.Integer({ minimum: 0, maximum: 1, description: '1 or 0' });

export const THERMAL_MODES = ['ambient', 'heat', 'freeze', 'chill'] as const;
export const CABINET_COMMANDS = ['resize', 'set_thermal_mode', 'disable', 'enable', 'open', 'close'] as const;
export const CUSTOMER_COMMANDS = ['here', 'agree', 'disagree'] as const;
const DoorState = oneOf(['open', 'closed']);

export const ErrorBody = Type.Object({
  message: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});

const cabinetBase = {
  id: Type.Integer(),
  key: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
  name: NullableString,
  locker_id: Type.Integer(),
  state: oneOf(['open', 'closed']),
  size: Type.String(),
  released_at: NullableTimestamp,
  thermal_mode: oneOf(THERMAL_MODES),
  rear_load_status: oneOf(['open', 'closed']),
  tag: NullableString,
};

/** L1: enabled boolean, occupied 1/0, cool_off_period boolean. */
export const ListedCabinet = Type.Object({
  ...cabinetBase,
  enabled: Type.Boolean(),
  occupied: Flag01,
  cool_off_period: Type.Boolean(),
});

/** L3: enabled and occupied 1/0. */
export const CommandedCabinet = Type.Object({ ...cabinetBase, enabled: Flag01, occupied: Flag01 });

/** L5: enabled and occupied booleans. */
export const CustomerCabinet = Type.Object({ ...cabinetBase, enabled: Type.Boolean(), occupied: Type.Boolean() });

export const Locker = Type.Object({
  id: Type.Integer(),
  api_key: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  name: Type.String(),
  organization_id: Type.Integer(),
  location_id: Type.Integer(),
  rear_loading_available: Type.Boolean(),
  version: Type.Integer(),
  timer: Type.Integer(),
  cabinets: Type.Array(ListedCabinet),
});

const orderCreation = {
  order_id: Type.Integer(),
  cabinet_id: Type.Integer(),
  open_code: Type.String({ description: 'Opaque, URL-safe, at least 128 random bits' }),
  locker_id: Type.Integer(),
  organization_id: Type.Integer(),
  location_id: Type.Integer(),
  app_owner_id: NullableInteger,
  updated_at: Timestamp,
  created_at: Timestamp,
  id: Type.Integer(),
};

/** L2's 201 body: exactly these ten fields. */
export const CreatedOrder = Type.Object(orderCreation);

/** L4 and L6: the full order record. */
export const OrderRecord = Type.Object({
  ...orderCreation,
  completed_at: NullableTimestamp,
  completed_by: NullableInteger,
  completed_device_id: NullableInteger,
  canceled_at: NullableTimestamp,
  application: NullableString,
});

export const LocationParams = Type.Object({ location_id: RowId });
export const CabinetParams = Type.Object({ cabinet_id: RowId });
// Fastify's router refuses longer path parameters (414) before validation.
export const OpenCodeParams = Type.Object({ open_code: Type.String({ minLength: 1, maxLength: 100 }) });

export const CreateOrderBody = Type.Object({
  rearload: Type.Boolean(),
  locker_id: RowId,
  cabinet_id: RowId,
  order_id: CallerNumber,
  organization_id: RowId,
  location_id: RowId,
});

export const CabinetCommandBody = Type.Object({
  command: oneOf(CABINET_COMMANDS),
  acted_by: Type.Optional(NullableCallerNumber),
  size: Type.Optional(nullable<string>('string', { maxLength: 64, ...STORABLE })),
  thermal_mode: Type.Optional(oneOfOrNull(THERMAL_MODES)),
  // The seed types it as a string; deployed apps also send the number itself.
  order_id: Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'], maxLength: 64, ...STORABLE, ...SAFE })),
  reason: Type.Optional(nullable<string>('string', { maxLength: 1000, ...STORABLE })),
  rearload: Type.Optional(Type.Boolean()),
  delay: Type.Optional(NullableDelay),
});

export const CompleteOrderBody = Type.Object({
  completed_by: Type.Optional(NullableCallerNumber),
  completed_device_id: Type.Optional(NullableCallerNumber),
  delay: Type.Optional(NullableDelay),
});

export const CustomerCommandBody = Type.Object({
  command: oneOf(CUSTOMER_COMMANDS),
});

export const StatusReportBody = Type.Object({
  cabinets: Type.Array(
    Type.Object({
      key: Type.Integer({ minimum: 0, maximum: MAX_INT4 }),
      front_status: Type.Optional(DoorState),
      rear_status: Type.Optional(DoorState),
    }),
    { maxItems: 1000 },
  ),
  locker_info: Type.Optional(
    Type.Object({
      ip: Type.Optional(Type.String({ maxLength: 64, ...STORABLE })),
      firmware: Type.Optional(Type.String({ maxLength: 128, ...STORABLE })),
    }),
  ),
  // Other fields of the event are kept as sent (the device's own details).
  event: Type.Optional(Type.Object({ type: Type.String({ minLength: 1, maxLength: 64, ...STORABLE }) })),
});

export const StatusReportReply = Type.Object({ message: Type.String() });
