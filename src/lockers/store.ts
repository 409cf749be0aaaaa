// SQL of the locker operations. Each request is one statement where it can be (a round trip is
// most of a request's time); the cabinet row is locked first wherever an order and its cabinet
// change together, so concurrent creations and completions queue instead of deadlocking.
import type { Queryable } from '../db/db.ts';
import type { CabinetRow, CreatedOrderRow, OrderRecordRow, OrderTarget } from './rules.ts';

const CABINET_COLUMNS = `c.id, c.key, c.created_at, c.updated_at, c.name, c.locker_id, c.state, c.enabled, c.size,
  c.occupied, c.released_at, c.thermal_mode, c.rear_load_status, c.tag, c.cool_off_until`;

const ORDER_COLUMNS = `o.id, o.order_id, o.cabinet_id, o.open_code, o.locker_id, o.organization_id, o.location_id,
  o.app_owner_id, o.created_at, o.updated_at, o.completed_at, o.completed_by, o.completed_device_id, o.canceled_at,
  o.application, o.rearload`;

/** A timestamptz as the wire wants it inside JSON built by the database. */
const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * L1: the location's lockers with their cabinets as the finished JSON body, built by the database
 * (the listing is the most read operation, and parsing a row per cabinet only to print it again
 * was most of its cost). undefined: no such location. The field set and flag types are L1's:
 * enabled boolean, occupied 1/0, cool_off_period boolean; tests hold it to the response schema.
 */
export async function locationListingJson(q: Queryable, locationId: number, now: Date): Promise<string | undefined> {
  const [row] = await q.query<{ body: string }>(
    `SELECT (
       SELECT coalesce(json_agg(lk ORDER BY lk.id), '[]')
       FROM (
         SELECT l.id, l.api_key, ${wireTime('l.created_at')} AS created_at, ${wireTime('l.updated_at')} AS updated_at,
           l.name, l.organization_id, l.location_id, l.rear_loading_available, l.version, l.timer,
           (SELECT coalesce(json_agg(cb ORDER BY cb.key), '[]')
            FROM (
              SELECT c.id, c.key, ${wireTime('c.created_at')} AS created_at, ${wireTime('c.updated_at')} AS updated_at,
                c.name, c.locker_id, c.state, c.enabled, c.size, c.occupied::int AS occupied,
                ${wireTime('c.released_at')} AS released_at, c.thermal_mode, c.rear_load_status, c.tag,
                coalesce(c.cool_off_until > $2::timestamptz, false) AS cool_off_period
              FROM cabinets c WHERE c.locker_id = l.id
            ) cb) AS cabinets
         FROM lockers l WHERE l.location_id = loc.id
       ) lk
     )::text AS body
     FROM locations loc WHERE loc.id = $1`,
    [locationId, now],
  );
  return row?.body;
}

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

/**
 * L2 in one statement: lock the cabinet, insert the order if every condition holds, mark the
 * cabinet occupied. The partial unique index decides between racing requests (ON CONFLICT waits for
 * the other transaction, then does nothing if it committed an open order).
 */
export async function createOrder(q: Queryable, o: NewOrder, now: Date): Promise<CreateOutcome> {
  const [row] = await q.query<OrderTarget & { o_id: number | null; o_open_code: string; o_created_at: string }>(
    `WITH cab AS (
       SELECT c.id, c.enabled, coalesce(c.cool_off_until > $8::timestamptz, false) AS cooling,
         l.id AS locker_id, l.location_id, l.organization_id, l.rear_loading_available
       FROM cabinets c JOIN lockers l ON l.id = c.locker_id
       WHERE c.id = $2
       FOR UPDATE OF c
     ), ins AS (
       INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload, created_at, updated_at)
       SELECT $1, cab.id, cab.locker_id, cab.organization_id, cab.location_id, $7, $6, $8, $8 FROM cab
       WHERE cab.locker_id = $3 AND cab.organization_id = $4 AND cab.location_id = $5
         AND cab.enabled AND NOT cab.cooling AND (NOT $6::boolean OR cab.rear_loading_available)
       ON CONFLICT (cabinet_id) WHERE completed_at IS NULL AND canceled_at IS NULL DO NOTHING
       RETURNING id, open_code, created_at
     ), occupy AS (
       UPDATE cabinets SET occupied = true, released_at = NULL, cool_off_until = NULL, updated_at = $8
       FROM cab WHERE cabinets.id = cab.id AND EXISTS (SELECT 1 FROM ins)
     )
     SELECT cab.id AS cabinet_id, cab.enabled, cab.cooling, cab.locker_id, cab.location_id, cab.organization_id,
       cab.rear_loading_available, ins.id AS o_id, ins.open_code AS o_open_code, ins.created_at AS o_created_at
     FROM cab LEFT JOIN ins ON true`,
    [o.orderId, o.cabinetId, o.lockerId, o.organizationId, o.locationId, o.rearload, o.openCode, now],
  );
  if (row === undefined) return { target: undefined, created: undefined };
  const { o_id, o_open_code, o_created_at, ...target } = row;
  if (o_id === null) return { target, created: undefined };
  return {
    target,
    created: {
      id: o_id, order_id: o.orderId, cabinet_id: target.cabinet_id, open_code: o_open_code, locker_id: target.locker_id,
      organization_id: target.organization_id, location_id: target.location_id, app_owner_id: null,
      created_at: o_created_at, updated_at: o_created_at, rearload: o.rearload,
    },
  };
}

export async function findOpenOrderOfCabinet(q: Queryable, cabinetId: number): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(
    `SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.cabinet_id = $1 AND o.completed_at IS NULL AND o.canceled_at IS NULL`,
    [cabinetId],
  );
  return row;
}

export async function findLatestOrderOfCabinet(q: Queryable, cabinetId: number): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(
    `SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.cabinet_id = $1 ORDER BY o.id DESC LIMIT 1`,
    [cabinetId],
  );
  return row;
}

export async function findOrderByOpenCode(q: Queryable, openCode: string): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(`SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.open_code = $1`, [openCode]);
  return row;
}

export interface Completion {
  completedBy: number | null;
  completedDeviceId: number | null;
  /** End of the cool-off, or null to release the cabinet now. */
  coolOffUntil: Date | null;
}

/**
 * L4 / L6: completes the open order (of the cabinet, or with the open code) and releases its
 * cabinet, or starts its cool-off, in one statement. undefined: no open order matched.
 */
export async function completeOpenOrder(
  q: Queryable,
  by: { cabinetId: number } | { openCode: string },
  c: Completion,
  now: Date,
): Promise<OrderRecordRow | undefined> {
  const lockCabinet =
    'cabinetId' in by
      ? 'SELECT c.id FROM cabinets c WHERE c.id = $1 FOR UPDATE'
      : 'SELECT c.id FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id WHERE o.open_code = $1 FOR UPDATE OF c';
  const matchOrder = 'cabinetId' in by ? 'o.cabinet_id = cab.id' : 'o.cabinet_id = cab.id AND o.open_code = $1';
  const [row] = await q.query<OrderRecordRow>(
    `WITH cab AS (${lockCabinet}),
     done AS (
       UPDATE locker_orders o SET completed_at = $2, completed_by = $3, completed_device_id = $4, updated_at = $2
       FROM cab WHERE ${matchOrder} AND o.completed_at IS NULL AND o.canceled_at IS NULL
       RETURNING ${ORDER_COLUMNS}
     ), release AS (
       UPDATE cabinets c SET occupied = $5::timestamptz IS NOT NULL,
         released_at = CASE WHEN $5::timestamptz IS NULL THEN $2::timestamptz END,
         cool_off_until = $5::timestamptz, updated_at = $2
       FROM done WHERE c.id = done.cabinet_id
     )
     SELECT * FROM done`,
    ['cabinetId' in by ? by.cabinetId : by.openCode, now, c.completedBy, c.completedDeviceId, c.coolOffUntil],
  );
  return row;
}

/** End of a cool-off: the cabinet is released at the moment the cool-off ended. A no-op when a
 * newer order took the cabinet meanwhile (its creation clears cool_off_until). */
export async function endCoolOff(q: Queryable, cabinetId: number, now: Date): Promise<void> {
  await q.query(
    `UPDATE cabinets SET occupied = false, released_at = cool_off_until, cool_off_until = NULL, updated_at = $2
     WHERE id = $1 AND cool_off_until IS NOT NULL AND cool_off_until <= $2`,
    [cabinetId, now],
  );
}

export interface CommandTarget extends CabinetRow {
  rear_loading_available: boolean;
  /** order_id of the cabinet's latest order (the one occupying it, when it is occupied). */
  current_order_id: number | null;
}

/** L3: the cabinet, locked for the rest of the transaction. */
export async function lockCabinetForCommand(q: Queryable, cabinetId: number): Promise<CommandTarget | undefined> {
  const [row] = await q.query<CommandTarget>(
    `SELECT ${CABINET_COLUMNS}, l.rear_loading_available,
       (SELECT o.order_id FROM locker_orders o WHERE o.cabinet_id = c.id AND o.canceled_at IS NULL ORDER BY o.id DESC LIMIT 1) AS current_order_id
     FROM cabinets c JOIN lockers l ON l.id = c.locker_id
     WHERE c.id = $1
     FOR UPDATE OF c`,
    [cabinetId],
  );
  return row;
}

/** L5 here / disagree: records it on the open order of the code; its cabinet, or undefined. */
export async function recordCustomerAction(
  q: Queryable,
  openCode: string,
  kind: 'here' | 'disagree',
  now: Date,
): Promise<(CabinetRow & { order_id: number }) | undefined> {
  const [row] = await q.query<CabinetRow & { order_id: number }>(
    `WITH o AS (
       SELECT id, cabinet_id, order_id FROM locker_orders
       WHERE open_code = $1 AND completed_at IS NULL AND canceled_at IS NULL
     ), ev AS (
       INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT id, $2, $3 FROM o
     )
     SELECT ${CABINET_COLUMNS}, o.order_id FROM cabinets c JOIN o ON o.cabinet_id = c.id`,
    [openCode, kind, now],
  );
  return row;
}

export interface StatusReport {
  lockerId: number;
  keys: number[];
  front: (string | null)[];
  rear: (string | null)[];
  ip: string | null;
  firmware: string | null;
  eventType: string | null;
  event: Record<string, unknown> | null;
}

/**
 * L7 in one statement, all or nothing: the door states, the locker's info and last-seen time and
 * the event are written only when every reported key is a cabinet of this locker. Returns the
 * keys that are not.
 */
export async function applyStatusReport(q: Queryable, r: StatusReport, now: Date): Promise<number[]> {
  const [row] = await q.query<{ unknown_keys: number[] }>(
    `WITH reported AS (
       SELECT * FROM unnest($2::int[], $3::text[], $4::text[]) AS x(key, front, rear)
     ), known AS (
       SELECT c.key FROM cabinets c WHERE c.locker_id = $1 AND c.key = ANY($2::int[])
     ), verdict AS (
       SELECT coalesce(array_agg(r.key) FILTER (WHERE k.key IS NULL), '{}') AS unknown_keys
       FROM reported r LEFT JOIN known k ON k.key = r.key
     ), doors AS (
       UPDATE cabinets c SET state = coalesce(r.front, c.state), rear_load_status = coalesce(r.rear, c.rear_load_status),
         updated_at = CASE WHEN (coalesce(r.front, c.state), coalesce(r.rear, c.rear_load_status)) IS DISTINCT FROM (c.state, c.rear_load_status)
                           THEN $8::timestamptz ELSE c.updated_at END
       FROM reported r, verdict v
       WHERE cardinality(v.unknown_keys) = 0 AND c.locker_id = $1 AND c.key = r.key
     ), seen AS (
       UPDATE lockers l SET ip = coalesce($5, l.ip), firmware = coalesce($6, l.firmware), last_seen_at = $8,
         updated_at = CASE WHEN (coalesce($5, l.ip), coalesce($6, l.firmware)) IS DISTINCT FROM (l.ip, l.firmware)
                           THEN $8::timestamptz ELSE l.updated_at END
       FROM verdict v WHERE cardinality(v.unknown_keys) = 0 AND l.id = $1
     ), ev AS (
       INSERT INTO locker_status_events (locker_id, type, event, created_at)
       SELECT $1, $7, $9::jsonb, $8 FROM verdict v WHERE cardinality(v.unknown_keys) = 0 AND $7::text IS NOT NULL
     )
     SELECT unknown_keys FROM verdict`,
    [r.lockerId, r.keys, r.front, r.rear, r.ip, r.firmware, r.eventType, now, r.event === null ? null : JSON.stringify(r.event)],
  );
  return row?.unknown_keys ?? [];
}
