// Cabinet commands: applied to the cabinet, logged with who gave them, and put into the locker's
// device outbox, all in the caller's transaction. A delayed close is logged now and carried out by
// the durable scheduler, which then sends it to the device.
import crypto from 'node:crypto';
import type { Tx } from '../db/db.ts';
import { enqueueDeviceMessage } from '../devices/outbox.ts';
import { cancelJob, enqueueJob } from '../jobs/queue.ts';
import { lockerCommandMessage, lockerCommandTopic } from '../devices/wire.ts';
import { isoMicros } from '../db/timestamps.ts';
import type { CabinetCommand, CabinetRow, Door, ThermalMode } from './rules.ts';

export const DELAYED_CLOSE_JOB = 'lockers.delayed_close';
export const COOL_OFF_END_JOB = 'lockers.cool_off_end';

/** One pending delayed close per door of a cabinet. */
export const delayedCloseKey = (cabinetId: number, door: Door) => `lockers:close:${cabinetId}:${door}`;
/** One pending cool-off end per cabinet. */
export const coolOffKey = (cabinetId: number) => `lockers:cool-off:${cabinetId}`;

export interface IssuedCommand {
  /** The cabinet by id (staff), or the cabinet of the open order with this code (a customer's agree,
   * recorded on the order in the same statement). */
  target: { cabinetId: number } | { openCode: string; event: 'agree' };
  command: CabinetCommand;
  door: Door;
  source: 'staff' | 'customer';
  actedBy: number | null;
  /** Logged with the command; for a customer, the order's own order_id. */
  orderId: string | null;
  reason: string | null;
  size: string | null;
  thermalMode: ThermalMode | null;
  /** Seconds before a close takes effect; null: now. */
  delaySeconds: number | null;
}

const CABINET_RETURNING = `c.id, c.key, c.created_at, c.updated_at, c.name, c.locker_id, c.state, c.enabled, c.size,
  c.occupied, c.released_at, c.thermal_mode, c.rear_load_status, c.tag, c.cool_off_until`;

/**
 * Applies a command to its cabinet and returns the cabinet as it now is (undefined: no such
 * cabinet, or no open order with the code). One statement changes the cabinet, logs the command
 * and overtakes a delayed close still waiting on that door; then the device message is queued.
 */
export async function issueCabinetCommand(q: Tx, cmd: IssuedCommand, now: Date): Promise<CabinetRow | undefined> {
  const commandId = crypto.randomUUID();
  const delayed = cmd.command === 'close' && cmd.delaySeconds !== null && cmd.delaySeconds > 0;
  const runAt = delayed ? new Date(now.getTime() + (cmd.delaySeconds ?? 0) * 1000) : now;
  const doorState = delayed ? null : cmd.command === 'open' ? 'open' : cmd.command === 'close' ? 'closed' : null;
  const isDoor = cmd.command === 'open' || cmd.command === 'close';
  const enabled = cmd.command === 'enable' ? true : cmd.command === 'disable' ? false : null;
  const byCode = 'openCode' in cmd.target;
  const target = byCode
    ? `SELECT c.*, o.id AS order_pk, o.order_id::text AS order_number FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id
       WHERE o.open_code = $1 AND o.completed_at IS NULL AND o.canceled_at IS NULL`
    : 'SELECT c.*, NULL::integer AS order_pk, NULL::text AS order_number FROM cabinets c WHERE c.id = $1';
  const recordEvent = byCode
    ? `, event AS (INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT order_pk, 'agree', $7 FROM cur)`
    : '';
  const [row] = await q.query<CabinetRow & { overtook: boolean }>(
    `WITH cur AS (${target}),
     next AS (
       SELECT cur.id,
         coalesce($2::text, cur.size) AS size, coalesce($3::text, cur.thermal_mode) AS thermal_mode,
         coalesce($4::boolean, cur.enabled) AS enabled,
         CASE WHEN $5::text = 'front' THEN coalesce($6::text, cur.state) ELSE cur.state END AS state,
         CASE WHEN $5::text = 'rear' THEN coalesce($6::text, cur.rear_load_status) ELSE cur.rear_load_status END AS rear_load_status
       FROM cur
     ), updated AS (
       UPDATE cabinets c SET size = n.size, thermal_mode = n.thermal_mode, enabled = n.enabled, state = n.state,
         rear_load_status = n.rear_load_status,
         updated_at = CASE WHEN (n.size, n.thermal_mode, n.enabled, n.state, n.rear_load_status)
                               IS DISTINCT FROM (c.size, c.thermal_mode, c.enabled, c.state, c.rear_load_status)
                          THEN $7::timestamptz ELSE c.updated_at END
       FROM next n WHERE c.id = n.id
       RETURNING c.*
     ), overtaken AS (
       UPDATE cabinet_commands cc SET canceled_at = $7 FROM cur
       WHERE $8::boolean AND cc.cabinet_id = cur.id AND cc.door = $5 AND cc.executed_at IS NULL AND cc.canceled_at IS NULL
       RETURNING cc.id
     ), logged AS (
       INSERT INTO cabinet_commands (command_id, cabinet_id, locker_id, command, door, source, acted_by, order_id, reason,
         size, thermal_mode, delay_seconds, created_at, run_at, executed_at)
       SELECT $9, cur.id, cur.locker_id, $10, $5, $11, $12, coalesce($13, cur.order_number), $14, $2, $3, $15, $7, $16,
         CASE WHEN $17::boolean THEN NULL ELSE $7::timestamptz END
       FROM cur
     )${recordEvent}
     SELECT ${CABINET_RETURNING}, EXISTS (SELECT 1 FROM overtaken) AS overtook FROM updated c`,
    [
      byCode ? (cmd.target as { openCode: string }).openCode : (cmd.target as { cabinetId: number }).cabinetId,
      cmd.command === 'resize' ? cmd.size : null, cmd.command === 'set_thermal_mode' ? cmd.thermalMode : null,
      enabled, cmd.door, doorState, now, isDoor, commandId, cmd.command, cmd.source, cmd.actedBy, cmd.orderId, cmd.reason,
      cmd.delaySeconds, runAt, delayed,
    ],
  );
  if (row === undefined) return undefined;
  const { overtook, ...cabinet } = row;
  if (delayed) {
    // Same key: a delayed close already waiting on this door is replaced.
    await enqueueJob(q, DELAYED_CLOSE_JOB, { command_id: commandId }, runAt, { key: delayedCloseKey(cabinet.id, cmd.door) });
    return cabinet;
  }
  if (overtook) await cancelJob(q, delayedCloseKey(cabinet.id, cmd.door));
  await enqueueDeviceMessage(
    q,
    { topic: lockerCommandTopic(cabinet.locker_id), payload: { ...lockerCommandMessage(cabinet, { commandId, command: cmd.command, door: cmd.door, issuedAt: isoMicros(now) }) }, key: commandId },
    now,
  );
  return cabinet;
}

/** The scheduler's side of a delayed close: close the door now and tell the locker. */
export async function runDelayedClose(q: Tx, commandId: string, now: Date): Promise<void> {
  const [done] = await q.query<CabinetRow & { door: Door }>(
    `WITH cmd AS (
       UPDATE cabinet_commands SET executed_at = $2
       WHERE command_id = $1 AND executed_at IS NULL AND canceled_at IS NULL
       RETURNING cabinet_id, door
     ), closed AS (
       UPDATE cabinets c SET
         state = CASE WHEN cmd.door = 'front' THEN 'closed' ELSE c.state END,
         rear_load_status = CASE WHEN cmd.door = 'rear' THEN 'closed' ELSE c.rear_load_status END,
         updated_at = CASE WHEN (cmd.door = 'front' AND c.state <> 'closed') OR (cmd.door = 'rear' AND c.rear_load_status <> 'closed')
                           THEN $2::timestamptz ELSE c.updated_at END
       FROM cmd WHERE c.id = cmd.cabinet_id
       RETURNING c.*
     )
     SELECT ${CABINET_RETURNING}, cmd.door FROM closed c, cmd`,
    [commandId, now],
  );
  if (done === undefined) return; // overtaken by another command on that door
  await enqueueDeviceMessage(
    q,
    { topic: lockerCommandTopic(done.locker_id), payload: { ...lockerCommandMessage(done, { commandId, command: 'close', door: done.door, issuedAt: isoMicros(now) }) }, key: commandId },
    now,
  );
}
