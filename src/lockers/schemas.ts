// Request and response schemas of the locker operations. The response schemas are the wire
// contract (field sets and flag types per operation) and let Fastify serialize without reflection.
import { Type } from 'typebox';
import { Flag01, INT32_MAX, nullable, NullableTimestamp, oneOf, oneOfOrNull, RowId, STORABLE, StorableText, Timestamp } from '../http/schemas.ts';

/** A caller's number (order_id, a user id, a device id): any JSON integer that is exact in JavaScript. */
const SAFE = { minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const CallerNumber = Type.Integer(SAFE);
const NullableCallerNumber = nullable(CallerNumber);
/** Seconds; at most a week, so a typo cannot park a cabinet for years. */
const NullableDelay = nullable(Type.Integer({ minimum: 0, maximum: 604_800, description: 'seconds' }));
const NullableInteger = nullable(Type.Integer());
const NullableString = nullable(Type.String());

/** A cabinet's thermal modes: the one list, the schemas and types built from it. */
export const THERMAL_MODES = ['ambient', 'heat', 'freeze', 'chill'] as const;
export const CABINET_COMMANDS = ['resize', 'set_thermal_mode', 'disable', 'enable', 'open', 'close'] as const;
export const CUSTOMER_COMMANDS = ['here', 'agree', 'disagree'] as const;
const DoorState = oneOf(['open', 'closed']);

const cabinetBase = {
  id: Type.Integer(),
  key: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
  name: NullableString,
  locker_id: Type.Integer(),
  state: DoorState,
  size: Type.String(),
  released_at: NullableTimestamp,
  thermal_mode: oneOf(THERMAL_MODES),
  rear_load_status: DoorState,
  tag: NullableString,
};

/** L1: enabled boolean, occupied 1/0, cool_off_period boolean. */
export const ListedCabinet = Type.Object(
  {
    ...cabinetBase,
    enabled: Type.Boolean(),
    occupied: Flag01,
    cool_off_period: Type.Boolean(),
  },
  { title: 'ListedCabinet' },
);

/** L3: enabled and occupied 1/0. */
export const CommandedCabinet = Type.Object({ ...cabinetBase, enabled: Flag01, occupied: Flag01 }, { title: 'CommandedCabinet' });

/** L5: enabled and occupied booleans. */
export const CustomerCabinet = Type.Object({ ...cabinetBase, enabled: Type.Boolean(), occupied: Type.Boolean() }, { title: 'CustomerCabinet' });

export const Locker = Type.Object(
  {
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
  },
  { title: 'Locker' },
);

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
export const CreatedOrder = Type.Object(orderCreation, { title: 'CreatedOrder' });

export const ORDER_STATUSES = ['open', 'ready', 'completed', 'canceled', 'expired'] as const;

/** L4, L6 and L8: the full order record. */
export const OrderRecord = Type.Object(
  {
    ...orderCreation,
    completed_at: NullableTimestamp,
    completed_by: NullableInteger,
    completed_device_id: NullableInteger,
    canceled_at: NullableTimestamp,
    application: NullableString,
    status: oneOf(ORDER_STATUSES),
    pickup_deadline: NullableTimestamp,
  },
  { title: 'OrderRecord' },
);

export const OrderParams = Type.Object({ id: RowId });

/** L8 and L9: optionally, the organization and location the caller expects the order to be of. */
export const OrderScopeBody = Type.Object({
  organization_id: Type.Optional(RowId),
  location_id: Type.Optional(RowId),
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
  size: Type.Optional(nullable(StorableText({ maxLength: 64 }))),
  thermal_mode: Type.Optional(oneOfOrNull(THERMAL_MODES)),
  // The seed types it as a string; deployed apps also send the number itself.
  order_id: Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'], maxLength: 64, ...STORABLE, ...SAFE })),
  reason: Type.Optional(nullable(StorableText({ maxLength: 1000 }))),
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
    Type.Object(
      {
        key: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
        // Null or absent: that door is not reported (contract section 5, version 3; lockers without
        // a rear door send null). An entry reporting neither door is refused (lockers/rules.ts).
        front_status: Type.Optional(oneOfOrNull(['open', 'closed'])),
        rear_status: Type.Optional(oneOfOrNull(['open', 'closed'])),
      },
      { description: 'A cabinet and what it reports of its doors: front_status, rear_status or both (null or absent: not reported)' },
    ),
    { maxItems: 1000 },
  ),
  locker_info: Type.Optional(
    Type.Object({
      ip: Type.Optional(StorableText({ maxLength: 64 })),
      firmware: Type.Optional(StorableText({ maxLength: 128 })),
    }),
  ),
  // Other fields of the event are kept as sent (the device's own details).
  event: Type.Optional(Type.Object({ type: StorableText({ minLength: 1, maxLength: 64 }) })),
});

export const StatusReportReply = Type.Object({ message: Type.String() }, { title: 'StatusReportReply' });
