// The SQL of the pickup lifecycle (contract section 13): canceling an order (L8), a new open code
// (L9), and the pickup job's reminders and deadline. Like store.ts, each change is one statement
// that writes its own events, and an order and its cabinet change with the cabinet row locked first.
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import { callOffJobs, enqueueKeyedJobs } from '../jobs/queue.ts';
import { PICKUP_JOB } from './rules.ts';
import { ORDER, ORDER_COLUMNS, orderEvent, pickupJobKeys } from './store.ts';
import type { OrderRecordRow, PickupTarget } from './types.ts';

export async function findOrderById(q: Queryable, id: number): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(`SELECT ${ORDER_COLUMNS} FROM locker_orders o WHERE o.id = $1`, [id]);
  return row;
}

/**
 * L8 in one statement: cancels the order if it has not ended (open, ready or expired), releases its
 * cabinet, drops its pickup job and writes `order_canceled`. undefined: no such order, or it ended.
 * The cabinet is locked first, as a completion locks it, so a cancel and a completion queue and the
 * second finds the order ended.
 */
export async function cancelBoundOrder(q: Tx, id: number, now: Date): Promise<OrderRecordRow | undefined> {
  const at = sql`${now}::timestamptz`;
  const [row] = await q.run<OrderRecordRow>(
    withCtes(
      [
        cte('cab', sql`SELECT c.id, c.key FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id WHERE o.id = ${id} FOR UPDATE OF c`),
        cte(
          'done',
          sql`UPDATE locker_orders o SET canceled_at = ${at}, updated_at = ${at}
          FROM cab WHERE o.id = ${id} AND o.cabinet_id = cab.id AND o.completed_at IS NULL AND o.canceled_at IS NULL
          RETURNING ${ORDER}`,
        ),
        cte(
          'release',
          sql`UPDATE cabinets c SET occupied = false, released_at = ${at}, cool_off_until = NULL, updated_at = ${at} FROM done WHERE c.id = done.cabinet_id`,
        ),
        cte('unjob', callOffJobs(pickupJobKeys('done'), at)),
        cte('ev', insertEvents(orderEvent('order_canceled', 'was canceled in', sql`SELECT done.*, cab.key AS cabinet_key FROM done, cab`, at))),
      ],
      sql`SELECT * FROM done`,
    ),
  );
  return row;
}

/**
 * L9 in one statement: the order's new open code, if it has not ended. The old code stops working
 * when this commits: L5 and L6 lock or update the order row they find by code, so one that waited
 * for this change re-reads the row and no longer finds its code.
 */
export async function replaceOpenCode(q: Queryable, id: number, openCode: string, now: Date): Promise<OrderRecordRow | undefined> {
  const [row] = await q.query<OrderRecordRow>(
    `UPDATE locker_orders o SET open_code = $2, updated_at = $3
     WHERE o.id = $1 AND o.completed_at IS NULL AND o.canceled_at IS NULL
     RETURNING ${ORDER_COLUMNS}`,
    [id, openCode, now],
  );
  return row;
}

/** The order of a pickup job, locked, if the job is still its current one: not ended, not
 * expired, and `step` reminders sent. */
export async function lockPickupTarget(q: Queryable, id: number, step: number): Promise<PickupTarget | undefined> {
  const [row] = await q.query<PickupTarget>(
    `SELECT o.id, o.created_at, o.pickup_deadline, o.reminders, coalesce(loc.locker_reminder_hours, 24)::float8 AS reminder_hours
     FROM locker_orders o JOIN locations loc ON loc.id = o.location_id
     WHERE o.id = $1 AND o.reminders = $2 AND o.completed_at IS NULL AND o.canceled_at IS NULL AND o.expired_at IS NULL
       AND o.pickup_deadline IS NOT NULL
     FOR NO KEY UPDATE OF o`,
    [id, step],
  );
  return row;
}

const ORDER_WITH_KEY = sql`SELECT u.*, c.key AS cabinet_key FROM u JOIN cabinets c ON c.id = u.cabinet_id`;

/** The deadline passed: the order expires (`order_expired`) and stays bound to its cabinet. */
export async function expireOrder(q: Tx, id: number, now: Date): Promise<void> {
  const at = sql`${now}::timestamptz`;
  await q.run(
    withCtes(
      [
        cte(
          'u',
          sql`UPDATE locker_orders o SET expired_at = ${at}
          WHERE o.id = ${id} AND o.completed_at IS NULL AND o.canceled_at IS NULL AND o.expired_at IS NULL
          RETURNING o.*`,
        ),
        cte('ev', insertEvents(orderEvent('order_expired', 'expired unclaimed in', ORDER_WITH_KEY, at))),
      ],
      sql`SELECT 1`,
    ),
  );
}

/** A pickup reminder (`pickup_reminder` with its count), and the job of the next step at `next`. */
export async function remindOrder(q: Tx, id: number, count: number, next: Date, now: Date): Promise<void> {
  await q.run(
    withCtes(
      [
        cte(
          'u',
          sql`UPDATE locker_orders o SET reminders = ${count}
          WHERE o.id = ${id} AND o.reminders = ${count - 1} AND o.completed_at IS NULL AND o.canceled_at IS NULL AND o.expired_at IS NULL
          RETURNING o.*`,
        ),
        cte(
          'job',
          enqueueKeyedJobs(sql`SELECT ${PICKUP_JOB}::text, jsonb_build_object('order', u.id, 'step', u.reminders), ${next}::timestamptz,
            'lockers:pickup:' || u.id || ':' || u.reminders FROM u`),
        ),
        cte(
          'ev',
          insertEvents(
            orderEvent('pickup_reminder', 'is waiting for its customer in', ORDER_WITH_KEY, sql`${now}::timestamptz`, sql`, 'reminder_count', s.reminders`),
          ),
        ),
      ],
      sql`SELECT 1`,
    ),
  );
}
