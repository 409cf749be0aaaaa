// SQL of the locker orders and the listing (the cabinets' commands and reports are in
// cabinet-store.ts, the pickup lifecycle's in lifecycle-store.ts). Each request is one statement
// where it can be (a round trip is most of a request's time), and a statement that changes an
// order writes its events (contract section 11) itself. The cabinet row is locked first wherever an
// order and its cabinet change together, so concurrent requests queue instead of deadlocking.
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes, type Sql } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import { callOffJobs, enqueueKeyedJobs } from '../jobs/queue.ts';
import { PICKUP_JOB } from './rules.ts';
import type { Completion, CreateOutcome, NewOrder, OrderRecordRow, OrderTarget } from './types.ts';

export const ORDER_COLUMNS = `o.id, o.order_id, o.cabinet_id, o.open_code, o.locker_id, o.organization_id, o.location_id,
  o.app_owner_id, o.created_at, o.updated_at, o.completed_at, o.completed_by, o.completed_device_id, o.canceled_at,
  o.application, o.rearload, o.pickup_deadline, o.ready_at, o.expired_at, o.reminders`;

/** The pending pickup job of each order of `orders` (rows with id and reminders): see rules.pickupKey. */
export const pickupJobKeys = (orders: string): Sql => sql`SELECT 'lockers:pickup:' || x.id || ':' || x.reminders FROM ${sql.raw(orders)} x`;

/** A timestamptz as the wire wants it inside JSON built by the database. */
const wireTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** An order event over `source`, whose rows have the order's columns and cabinet_key, for insertEvents. */
export const orderEvent = (status: string, message: string, source: Sql, at: Sql, moreDetails: Sql = sql.empty): Sql => sql`
  SELECT 'locker', ${status}::text, s.organization_id, s.location_id, s.id::text,
    jsonb_build_object('locker_id', s.locker_id, 'cabinet_id', s.cabinet_id, 'cabinet_key', s.cabinet_key, 'order_id', s.order_id, 'id', s.id${moreDetails}),
    format(${`Order %s ${message} cabinet %s.`}::text, s.order_id, s.cabinet_key), ${at}
  FROM (${source}) s`;

/** ORDER_COLUMNS in a statement built with sql. */
export const ORDER = sql.raw(ORDER_COLUMNS);

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
  const at = sql`${now}::timestamptz`;
  const [row] = await q.run<OrderTarget & { o_id: number | null; o_open_code: string; o_created_at: string }>(
    withCtes(
      [
        cte(
          'cab',
          sql`SELECT c.id, c.key, c.enabled, coalesce(c.cool_off_until > ${at}, false) AS cooling,
            l.id AS locker_id, l.location_id, l.organization_id, l.rear_loading_available,
            coalesce(loc.locker_pickup_hours, 72)::float8 AS pickup_hours, coalesce(loc.locker_reminder_hours, 24)::float8 AS reminder_hours
          FROM cabinets c JOIN lockers l ON l.id = c.locker_id JOIN locations loc ON loc.id = l.location_id
          WHERE c.id = ${o.cabinetId}
          FOR UPDATE OF c`,
        ),
        cte(
          'ins',
          sql`INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload, created_at, updated_at, pickup_deadline)
          SELECT ${o.orderId}, cab.id, cab.locker_id, cab.organization_id, cab.location_id, ${o.openCode}, ${o.rearload}, ${at}, ${at},
            ${at} + cab.pickup_hours * interval '1 hour' FROM cab
          WHERE cab.locker_id = ${o.lockerId} AND cab.organization_id = ${o.organizationId} AND cab.location_id = ${o.locationId}
            AND cab.enabled AND NOT cab.cooling AND (NOT ${o.rearload}::boolean OR cab.rear_loading_available)
          ON CONFLICT (cabinet_id) WHERE completed_at IS NULL AND canceled_at IS NULL DO NOTHING
          RETURNING id, order_id, cabinet_id, locker_id, organization_id, location_id, open_code, created_at, pickup_deadline`,
        ),
        cte(
          'pickup',
          enqueueKeyedJobs(sql`SELECT ${PICKUP_JOB}::text, jsonb_build_object('order', ins.id, 'step', 0),
            least(${at} + cab.reminder_hours * interval '1 hour', ins.pickup_deadline), 'lockers:pickup:' || ins.id || ':0' FROM ins, cab`),
        ),
        cte(
          'occupy',
          sql`UPDATE cabinets SET occupied = true, released_at = NULL, cool_off_until = NULL, updated_at = ${at}
          FROM cab WHERE cabinets.id = cab.id AND EXISTS (SELECT 1 FROM ins)`,
        ),
        cte('ev', insertEvents(orderEvent('order_created', 'was placed in', sql`SELECT ins.*, cab.key AS cabinet_key FROM ins, cab`, at))),
      ],
      sql`SELECT cab.id AS cabinet_id, cab.enabled, cab.cooling, cab.locker_id, cab.location_id, cab.organization_id,
        cab.rear_loading_available, ins.id AS o_id, ins.open_code AS o_open_code, ins.created_at AS o_created_at
      FROM cab LEFT JOIN ins ON true`,
    ),
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
  const at = sql`${now}::timestamptz`;
  const coolOffUntil = sql`${c.coolOffUntil}::timestamptz`;
  const lockCabinet =
    'cabinetId' in by
      ? sql`SELECT c.id, c.key FROM cabinets c WHERE c.id = ${by.cabinetId} FOR UPDATE`
      : sql`SELECT c.id, c.key FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id WHERE o.open_code = ${by.openCode} FOR UPDATE OF c`;
  const matchOrder = 'cabinetId' in by ? sql`o.cabinet_id = cab.id` : sql`o.cabinet_id = cab.id AND o.open_code = ${by.openCode}`;
  const [row] = await q.run<OrderRecordRow>(
    withCtes(
      [
        cte('cab', lockCabinet),
        cte(
          'done',
          sql`UPDATE locker_orders o SET completed_at = ${at}, completed_by = ${c.completedBy}, completed_device_id = ${c.completedDeviceId}, updated_at = ${at}
          FROM cab WHERE ${matchOrder} AND o.completed_at IS NULL AND o.canceled_at IS NULL
          RETURNING ${ORDER}`,
        ),
        cte(
          'release',
          sql`UPDATE cabinets c SET occupied = ${coolOffUntil} IS NOT NULL,
            released_at = CASE WHEN ${coolOffUntil} IS NULL THEN ${at} END,
            cool_off_until = ${coolOffUntil}, updated_at = ${at}
          FROM done WHERE c.id = done.cabinet_id`,
        ),
        cte('unjob', callOffJobs(pickupJobKeys('done'), at)),
        cte('ev', insertEvents(orderEvent('order_completed', 'was completed in', sql`SELECT done.*, cab.key AS cabinet_key FROM done, cab`, at))),
      ],
      sql`SELECT * FROM done`,
    ),
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
