// SQL of the locker orders and the listing (the cabinets' commands and reports are in
// cabinet-store.ts, the pickup lifecycle's in lifecycle-store.ts). Each request is one statement
// where it can be (a round trip is most of a request's time), and a statement that changes an
// order writes its events (contract section 11) itself. The cabinet row is locked first wherever an
// order and its cabinet change together, so concurrent requests queue instead of deadlocking.
import type { Queryable, Tx } from '../db/db.ts';
import { insertEventsFrom } from '../events/log.ts';
import { callOffJobsFrom, insertKeyedJobsFrom } from '../jobs/queue.ts';
import { PICKUP_JOB } from './rules.ts';
import type { Completion, CreateOutcome, NewOrder, OrderRecordRow, OrderTarget } from './types.ts';

export const ORDER_COLUMNS = `o.id, o.order_id, o.cabinet_id, o.open_code, o.locker_id, o.organization_id, o.location_id,
  o.app_owner_id, o.created_at, o.updated_at, o.completed_at, o.completed_by, o.completed_device_id, o.canceled_at,
  o.application, o.rearload, o.pickup_deadline, o.ready_at, o.expired_at, o.reminders`;

/** The pending pickup job of each order of `orders` (rows with id and reminders): see rules.pickupKey. */
export const pickupJobKeys = (orders: string) => `SELECT 'lockers:pickup:' || x.id || ':' || x.reminders FROM ${orders} x`;

/** A timestamptz as the wire wants it inside JSON built by the database. */
const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** An order event over `source`, whose rows have the order's columns and cabinet_key. */
export const orderEvent = (status: string, message: string, source: string, now: string, moreDetails = '') => `
  SELECT 'locker', '${status}', s.organization_id, s.location_id, s.id::text,
    jsonb_build_object('locker_id', s.locker_id, 'cabinet_id', s.cabinet_id, 'cabinet_key', s.cabinet_key, 'order_id', s.order_id, 'id', s.id${moreDetails}),
    format('Order %s ${message} cabinet %s.', s.order_id, s.cabinet_key), ${now}
  FROM (${source}) s`;

/**
 * L1: the location's lockers with their cabinets as the finished JSON body, built by the database
 * (the listing is the most read operation, and parsing a row per cabinet only to print it again
 * was most of its cost). undefined: no such location. The field set and flag types are L1's:
 * enabled boolean, occupied 1/0, cool_off_period boolean; tests hold it to the response schema.
 */
export async function locationListingJson(q: Queryable, locationId: number, now: Date): Promise<string | undefined> {
  const [row] = await q.query<{ body: string }>(
    `SELECT (
       -- string_agg of row_to_json rather than json_agg, whose array has a line break between elements.
       SELECT '[' || coalesce(string_agg(row_to_json(lk)::text, ',' ORDER BY lk.id), '') || ']'
       FROM (
         SELECT l.id, l.api_key, ${wireTime('l.created_at')} AS created_at, ${wireTime('l.updated_at')} AS updated_at,
           l.name, l.organization_id, l.location_id, l.rear_loading_available, l.version, l.timer,
           (SELECT ('[' || coalesce(string_agg(row_to_json(cb)::text, ',' ORDER BY cb.key), '') || ']')::json
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

/**
 * L2 in one statement: lock the cabinet, insert the order if every condition holds, mark the
 * cabinet occupied, write `order_created`. The partial unique index decides between racing
 * requests (ON CONFLICT waits for the other transaction, then does nothing if it committed an open order).
 */
export async function insertOrder(q: Tx, o: NewOrder, now: Date): Promise<CreateOutcome> {
  const [row] = await q.query<OrderTarget & { o_id: number | null; o_open_code: string; o_created_at: string }>(
    `WITH cab AS (
       SELECT c.id, c.key, c.enabled, coalesce(c.cool_off_until > $8::timestamptz, false) AS cooling,
         l.id AS locker_id, l.location_id, l.organization_id, l.rear_loading_available,
         coalesce(loc.locker_pickup_hours, 72)::float8 AS pickup_hours, coalesce(loc.locker_reminder_hours, 24)::float8 AS reminder_hours
       FROM cabinets c JOIN lockers l ON l.id = c.locker_id JOIN locations loc ON loc.id = l.location_id
       WHERE c.id = $2
       FOR UPDATE OF c
     ), ins AS (
       INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload, created_at, updated_at, pickup_deadline)
       SELECT $1, cab.id, cab.locker_id, cab.organization_id, cab.location_id, $7, $6, $8, $8, $8 + cab.pickup_hours * interval '1 hour' FROM cab
       WHERE cab.locker_id = $3 AND cab.organization_id = $4 AND cab.location_id = $5
         AND cab.enabled AND NOT cab.cooling AND (NOT $6::boolean OR cab.rear_loading_available)
       ON CONFLICT (cabinet_id) WHERE completed_at IS NULL AND canceled_at IS NULL DO NOTHING
       RETURNING id, order_id, cabinet_id, locker_id, organization_id, location_id, open_code, created_at, pickup_deadline
     ), pickup AS (
       ${insertKeyedJobsFrom(`SELECT '${PICKUP_JOB}', jsonb_build_object('order', ins.id, 'step', 0),
         least($8 + cab.reminder_hours * interval '1 hour', ins.pickup_deadline), 'lockers:pickup:' || ins.id || ':0' FROM ins, cab`)}
     ), occupy AS (
       UPDATE cabinets SET occupied = true, released_at = NULL, cool_off_until = NULL, updated_at = $8
       FROM cab WHERE cabinets.id = cab.id AND EXISTS (SELECT 1 FROM ins)
     ), ev AS (
       ${insertEventsFrom(q, orderEvent('order_created', 'was placed in', 'SELECT ins.*, cab.key AS cabinet_key FROM ins, cab', '$8::timestamptz'))}
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
      id: o_id,
      order_id: o.orderId,
      cabinet_id: target.cabinet_id,
      open_code: o_open_code,
      locker_id: target.locker_id,
      organization_id: target.organization_id,
      location_id: target.location_id,
      app_owner_id: null,
      created_at: o_created_at,
      updated_at: o_created_at,
      rearload: o.rearload,
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
  const [row] = await q.query<OrderRecordRow>(`SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.cabinet_id = $1 ORDER BY o.id DESC LIMIT 1`, [cabinetId]);
  return row;
}

export async function findOrderByOpenCode(q: Queryable, openCode: string): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(`SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.open_code = $1`, [openCode]);
  return row;
}

/**
 * L4 / L6 in one statement: completes the open order (of the cabinet, or with the open code),
 * releases its cabinet or starts its cool-off, and writes `order_completed`. undefined: no open
 * order matched.
 */
export async function completeOpenOrder(
  q: Tx,
  by: { cabinetId: number } | { openCode: string },
  c: Completion,
  now: Date,
): Promise<OrderRecordRow | undefined> {
  const lockCabinet =
    'cabinetId' in by
      ? 'SELECT c.id, c.key FROM cabinets c WHERE c.id = $1 FOR UPDATE'
      : 'SELECT c.id, c.key FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id WHERE o.open_code = $1 FOR UPDATE OF c';
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
     ), unjob AS (${callOffJobsFrom(pickupJobKeys('done'), '$2::timestamptz')}
     ), ev AS (
       ${insertEventsFrom(q, orderEvent('order_completed', 'was completed in', 'SELECT done.*, cab.key AS cabinet_key FROM done, cab', '$2::timestamptz'))}
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
