// The cabinet use cases: L3 a staff command, L5 a customer's here / agree / disagree, and the
// delayed close a command left for later. A command changes its cabinet, is logged with who gave
// it, writes the event of a door it opens or closes, and goes to the locker through the device
// outbox, all in one transaction (L5 agree: one statement); a delayed close waits as a job and does
// the same when it runs.
import crypto from 'node:crypto';
import type { Tx } from '../db/db.ts';
import { AppError, notFound } from '../http/errors.ts';
import { enqueueJob } from '../jobs/queue.ts';
import {
  commandEffect,
  commandProblems,
  DELAYED_CLOSE_JOB,
  delayedCloseKey,
  delayedCloseSeconds,
  doorOf,
  isDoorCommand,
  looksLikeOpenCode,
  type CabinetCommandRequest,
} from './rules.ts';
import { applyCabinetCommand, executeDelayedClose, lockCabinetForCommand, recordCustomerAction } from './cabinet-store.ts';
import type { CabinetChange, CabinetRow, LockerDeps } from './types.ts';

/**
 * Applies a command in the caller's transaction or statement; the cabinet as it now is, or undefined
 * when the target is not found. Carried out now, the store's one statement also sends it to the
 * locker; a delayed close waits as a job (one statement more: L3 only, in its transaction).
 */
async function carryOut(q: Tx, change: CabinetChange, now: Date): Promise<CabinetRow | undefined> {
  const cabinet = await applyCabinetCommand(q, change, now);
  // Same key: a delayed close already waiting on this door is replaced.
  if (cabinet !== undefined && change.delayed) {
    await enqueueJob(q, DELAYED_CLOSE_JOB, { command_id: change.commandId }, change.runAt, { key: delayedCloseKey(cabinet.id, change.door) });
  }
  return cabinet;
}

/** L3: a staff command on a cabinet, checked against the cabinet locked for it. */
export async function commandCabinet(deps: LockerDeps, cabinetId: number, req: CabinetCommandRequest): Promise<CabinetRow> {
  return deps.db.tx(async (q) => {
    const cabinet = await lockCabinetForCommand(q, cabinetId);
    if (cabinet === undefined) throw notFound(`cabinet ${cabinetId}`);
    const problem = commandProblems(req, {
      occupied: cabinet.occupied,
      rearLoadingAvailable: cabinet.rear_loading_available,
      currentOrderId: cabinet.current_order_id,
    });
    if (problem !== null) throw problem;
    const now = deps.clock.now();
    const delay = delayedCloseSeconds(req);
    const effect = commandEffect(req.command, { delayed: delay !== null, size: req.size?.trim() ?? null, thermalMode: req.thermal_mode ?? null });
    const orderId = req.order_id ?? null;
    const updated = await carryOut(
      q,
      {
        ...effect,
        target: { cabinetId },
        commandId: crypto.randomUUID(),
        command: req.command,
        door: doorOf(req),
        source: 'staff',
        actedBy: req.acted_by ?? null,
        orderId: orderId === null ? null : String(orderId),
        reason: req.reason ?? null,
        overtakes: isDoorCommand(req.command),
        delaySeconds: req.command === 'close' ? (req.delay ?? null) : null,
        runAt: delay === null ? now : new Date(now.getTime() + delay * 1000),
        delayed: delay !== null,
      },
      now,
    );
    if (updated === undefined) throw notFound(`cabinet ${cabinetId}`);
    return updated;
  });
}

/**
 * L5: `here` and `disagree` are recorded on the order; `agree` also opens the cabinet's front door
 * for the customer (a command from the customer, as staff's open would be).
 */
export async function customerCommand(deps: LockerDeps, openCode: string, command: 'here' | 'agree' | 'disagree'): Promise<CabinetRow> {
  const missing = () => new AppError(404, 'not_found', 'no open order has this open code');
  if (!looksLikeOpenCode(openCode)) throw missing();
  const now = deps.clock.now();
  const cabinet =
    command === 'agree'
      ? // Carried out now, never delayed: the store's one statement is the whole change.
        await deps.db.statement((q) =>
          applyCabinetCommand(
            q,
            {
              ...commandEffect('open', { delayed: false, size: null, thermalMode: null }),
              target: { openCode },
              commandId: crypto.randomUUID(),
              command: 'open',
              door: 'front',
              source: 'customer',
              actedBy: null,
              orderId: null,
              reason: null,
              overtakes: true,
              delaySeconds: null,
              runAt: now,
              delayed: false,
            },
            now,
          ),
        )
      : await deps.db.statement((q) => recordCustomerAction(q, openCode, command, now));
  if (cabinet === undefined) throw missing();
  return cabinet;
}

/** The delayed-close job: close the door now and tell the locker, unless another command on that door overtook it. */
export async function runDelayedClose(q: Tx, commandId: string, now: Date): Promise<void> {
  await executeDelayedClose(q, commandId, now);
}
