// The order use cases: L2 creates an order bound to a cabinet (or gives back the same order to an
// identical repeat), L4 and L6 complete it and release the cabinet, now or after a cool-off.
import { AppError } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import type { Tx } from '../db/db.ts';
import { enqueueJob } from '../jobs/queue.ts';
import { COOL_OFF_END_JOB, coolOffEnd, coolOffKey, isReplay, looksLikeOpenCode, orderMismatch, orderRefusal, type CreateOrderRequest } from './rules.ts';
import { completeOpenOrder, findLatestOrderOfCabinet, findOpenOrderOfCabinet, findOrderByOpenCode, insertOrder } from './store.ts';
import type { CreatedOrderRow, LockerDeps, OrderRecordRow } from './types.ts';

/** Bytes of randomness of an open code: 192 bits, 32 URL-safe characters. */
export const OPEN_CODE_BYTES = 24;
/** A creation or completion that lost a race to a concurrent change looks again, this many times. */
const ATTEMPTS = 3;

/**
 * L2. One statement creates the order when nothing refuses it (and writes `order_created`); when
 * it creates nothing, a fresh read of the cabinet's open order tells a replay from a refusal.
 */
export async function createOrder(deps: LockerDeps, req: CreateOrderRequest): Promise<CreatedOrderRow> {
  const openCode = randomToken(OPEN_CODE_BYTES);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = deps.clock.now();
    const { target, created } = await deps.db.statement((q) =>
      insertOrder(
        q,
        {
          orderId: req.order_id,
          cabinetId: req.cabinet_id,
          lockerId: req.locker_id,
          organizationId: req.organization_id,
          locationId: req.location_id,
          rearload: req.rearload,
          openCode,
        },
        now,
      ),
    );
    const mismatch = orderMismatch(req, target);
    if (mismatch !== null) throw mismatch;
    if (created !== undefined) return created;
    // Nothing was inserted: read the open order with a fresh snapshot (it may have just committed).
    const open = await findOpenOrderOfCabinet(deps.db, req.cabinet_id);
    if (isReplay(req, open)) return open;
    const refusal = target === undefined ? null : orderRefusal(target, open);
    if (refusal !== null) throw refusal;
    // The open order was completed between the two reads: the cabinet may be free now.
  }
  throw new AppError(409, 'cabinet_occupied', `cabinet ${req.cabinet_id} is changing, try again`);
}

export interface CompleteOptions {
  completed_by?: number | null;
  completed_device_id?: number | null;
  /** Seconds of cool-off before the cabinet is released. */
  delay?: number | null;
}

/**
 * L4 (by cabinet) and L6 (by open code): complete the open order, or give back the already
 * completed one unchanged. A completion with a cool-off also schedules the cabinet's release.
 */
export async function completeOrder(
  deps: LockerDeps,
  by: { cabinetId: number } | { openCode: string },
  options: CompleteOptions = {},
): Promise<OrderRecordRow> {
  const missing = () => new AppError(404, 'not_found', 'cabinetId' in by ? `cabinet ${by.cabinetId} has no order to complete` : 'no order has this open code');
  if ('openCode' in by && !looksLikeOpenCode(by.openCode)) throw missing();
  const { db, clock } = deps;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = clock.now();
    const coolOffUntil = coolOffEnd(now, options.delay);
    const run = async (q: Tx): Promise<OrderRecordRow | undefined> => {
      const done = await completeOpenOrder(
        q,
        by,
        {
          completedBy: options.completed_by ?? null,
          completedDeviceId: options.completed_device_id ?? null,
          coolOffUntil,
        },
        now,
      );
      if (done !== undefined && coolOffUntil !== null) {
        await enqueueJob(q, COOL_OFF_END_JOB, { cabinet_id: done.cabinet_id }, coolOffUntil, { key: coolOffKey(done.cabinet_id) });
      }
      return done;
    };
    // Without a cool-off the completion is one statement: no BEGIN and COMMIT round trips.
    const done = coolOffUntil === null ? await db.statement(run) : await db.tx(run);
    if (done !== undefined) return done;
    const order = 'cabinetId' in by ? await findLatestOrderOfCabinet(db, by.cabinetId) : await findOrderByOpenCode(db, by.openCode);
    if (order === undefined) throw missing();
    if (order.canceled_at !== null) throw new AppError(409, 'order_canceled', `order ${order.id} was canceled: it cannot be completed`);
    if (order.completed_at !== null) return order;
    // An order opened after this statement's snapshot: complete that one.
  }
  throw new AppError(409, 'order_changing', 'the order is changing, try again');
}
