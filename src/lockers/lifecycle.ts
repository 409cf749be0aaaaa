// The pickup lifecycle (contract section 13): staff cancel an order (L8) or give it a new open code
// (L9), and each order's pickup job sends reminders and expires it at its deadline. An order
// becomes ready in the statements that close its door (store.ts: L3, the delayed close, L7).
import { AppError, notFound } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import type { Tx } from '../db/db.ts';
import { cancelBoundOrder, expireOrder, findOrderById, lockPickupTarget, remindOrder, replaceOpenCode } from './lifecycle-store.ts';
import { OPEN_CODE_BYTES } from './orders.ts';
import { endedOrderRefusal, nextPickupRun, outsideScope } from './rules.ts';
import type { LockerDeps, OrderRecordRow, OrderScope } from './types.ts';

const missing = (id: number) => notFound(`order ${id}`);

/** The order, if the caller may see it; else 404 (another organization's order is not leaked). */
async function visibleOrder(deps: LockerDeps, id: number, scope: OrderScope): Promise<OrderRecordRow> {
  const order = await findOrderById(deps.db, id);
  if (order === undefined || outsideScope(order, scope)) throw missing(id);
  return order;
}

/**
 * L8: cancels an open, ready or expired order and releases its cabinet; a canceled order comes back
 * unchanged; a completed one is 409. Whether a cancel or a racing completion wins is settled by the
 * cabinet's row lock: the loser reads the winner's committed result.
 */
export async function cancelOrder(deps: LockerDeps, id: number, scope: OrderScope = {}): Promise<OrderRecordRow> {
  const before = await visibleOrder(deps, id, scope);
  if (before.canceled_at !== null) return before;
  if (before.completed_at !== null) throw endedOrderRefusal(before, 'be canceled') as AppError;
  const canceled = await deps.db.statement((q) => cancelBoundOrder(q, id, deps.clock.now()));
  if (canceled !== undefined) return canceled;
  const after = await visibleOrder(deps, id, scope);
  if (after.canceled_at !== null) return after;
  throw endedOrderRefusal(after, 'be canceled') ?? new AppError(409, 'order_changing', 'the order is changing, try again');
}

/** L9: a new open code for an order that has not ended; the old one stops working at once. */
export async function renewOpenCode(deps: LockerDeps, id: number, scope: OrderScope = {}): Promise<OrderRecordRow> {
  const before = await visibleOrder(deps, id, scope);
  const refusal = endedOrderRefusal(before, 'get a new open code');
  if (refusal !== null) throw refusal;
  const renewed = await deps.db.statement((q) => replaceOpenCode(q, id, randomToken(OPEN_CODE_BYTES), deps.clock.now()));
  if (renewed !== undefined) return renewed;
  const after = await visibleOrder(deps, id, scope);
  throw endedOrderRefusal(after, 'get a new open code') ?? new AppError(409, 'order_changing', 'the order is changing, try again');
}

/**
 * The pickup job of an order after `step` reminders: past the deadline the order expires; before
 * it, a reminder, and the next step's job. A job whose order ended, expired, or moved on does nothing.
 */
export async function runPickupJob(q: Tx, orderId: number, step: number, now: Date): Promise<void> {
  const order = await lockPickupTarget(q, orderId, step);
  if (order === undefined) return;
  const deadline = new Date(order.pickup_deadline);
  if (now.getTime() >= deadline.getTime()) {
    await expireOrder(q, orderId, now);
    return;
  }
  const next = nextPickupRun(new Date(order.created_at), deadline, order.reminder_hours, step + 1);
  await remindOrder(q, orderId, step + 1, next, now);
}
