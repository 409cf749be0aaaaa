// SQL of the cabinets: a staff or customer command, the delayed close, the locker's own status
// report. Each is one statement that changes the doors, writes the event of each door that
// changed and makes ready the order a close of its loading door completes (contract sections 11
// and 13). The cabinet row is locked first, so a door's state before a change is read under that
// lock and each change is one event however requests race.
import type { Queryable, Tx } from '../db/db.ts';
import { isoMicros } from '../db/timestamps.ts';
import { insertDeviceMessagesFrom } from '../devices/outbox.ts';
import { lockerCommandMessageSql, lockerCommandTopicSql } from '../devices/wire.ts';
import { insertEventsFrom, insertEventsReturningFrom } from '../events/log.ts';
import { callOffJobsFrom } from '../jobs/queue.ts';
import { delayedCloseKeySql } from './rules.ts';
import { orderEvent } from './store.ts';
import type { CabinetChange, CabinetRow, CommandTarget, StatusReport } from './types.ts';

const CABINET_COLUMNS = `c.id, c.key, c.created_at, c.updated_at, c.name, c.locker_id, c.state, c.enabled, c.size,
  c.occupied, c.released_at, c.thermal_mode, c.rear_load_status, c.tag, c.cool_off_until`;

/**
 * The events of doors that changed: `changes` has cabinet_id, cabinet_key, locker_id, door,
 * old_state, new_state; a door left as it was writes nothing. The order is the cabinet's open one.
 */
const doorEvents = (changes: string, now: string) => `
  SELECT 'locker', CASE WHEN ch.new_state = 'open' THEN 'cabinet_opened' ELSE 'cabinet_closed' END,
    l.organization_id, l.location_id, ch.cabinet_id::text,
    jsonb_build_object('locker_id', l.id, 'cabinet_id', ch.cabinet_id, 'cabinet_key', ch.cabinet_key, 'door', ch.door,
      'order_id', o.order_id, 'id', o.id),
    format('The %s door of cabinet %s of %s %s.', ch.door, ch.cabinet_key, l.name, CASE WHEN ch.new_state = 'open' THEN 'opened' ELSE 'closed' END),
    ${now}
  FROM (${changes}) ch JOIN lockers l ON l.id = ch.locker_id
    LEFT JOIN locker_orders o ON o.cabinet_id = ch.cabinet_id AND o.completed_at IS NULL AND o.canceled_at IS NULL
  WHERE ch.new_state IS DISTINCT FROM ch.old_state`;

/**
 * The CTEs `ready` and `ready_ev`: the orders that a close of their door makes ready (contract
 * section 13), with their `order_ready` events. `closes` has cabinet_id, cabinet_key and door of
 * each closed door; an order is made ready once, only while open (not yet ready, not expired),
 * and by its loading door (rear for a rearload order, else front).
 */
const readyOrders = (closes: string, now: string, events: (select: string) => string) => `
  ready AS (
    -- The cabinet's open order found through its partial unique index, whatever the plan: a join on
    -- cabinet_id over the closes (whose row count the planner cannot know) may scan every order.
    UPDATE locker_orders o SET ready_at = ${now}
    FROM (SELECT cl.cabinet_key, cl.door,
            (SELECT x.id FROM locker_orders x WHERE x.cabinet_id = cl.cabinet_id AND x.completed_at IS NULL AND x.canceled_at IS NULL) AS order_pk
          FROM (${closes}) cl) AS c
    WHERE o.id = c.order_pk AND c.door = CASE WHEN o.rearload THEN 'rear' ELSE 'front' END
      AND o.ready_at IS NULL AND o.expired_at IS NULL
    RETURNING o.*, c.cabinet_key
  ), ready_ev AS (${events(orderEvent('order_ready', 'is ready in', 'SELECT * FROM ready', now))})`;

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
export async function recordCustomerAction(q: Queryable, openCode: string, kind: 'here' | 'disagree', now: Date): Promise<CabinetRow | undefined> {
  const [row] = await q.query<CabinetRow>(
    `WITH o AS (
       SELECT id, cabinet_id FROM locker_orders WHERE open_code = $1 AND completed_at IS NULL AND canceled_at IS NULL
       FOR NO KEY UPDATE
     ), ev AS (
       INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT id, $2, $3 FROM o
     )
     SELECT ${CABINET_COLUMNS} FROM cabinets c JOIN o ON o.cabinet_id = c.id`,
    [openCode, kind, now],
  );
  return row;
}

/**
 * L3 and L5 agree in one statement: changes the cabinet, logs the command, cancels a delayed close
 * it overtakes and writes the door's event; carried out now (not delayed), it also calls off that
 * delayed close's job and sends the command to the locker through the device outbox, so that L5
 * agree is one round trip. undefined: no such cabinet, or no open order with the code.
 */
export async function applyCabinetCommand(q: Tx, cmd: CabinetChange, now: Date): Promise<CabinetRow | undefined> {
  const byCode = 'openCode' in cmd.target;
  const target = byCode
    ? `SELECT c.*, o.id AS order_pk, o.order_id::text AS order_number FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id
       WHERE o.open_code = $1 AND o.completed_at IS NULL AND o.canceled_at IS NULL FOR NO KEY UPDATE OF c, o`
    : 'SELECT c.*, NULL::integer AS order_pk, NULL::text AS order_number FROM cabinets c WHERE c.id = $1';
  const agree = byCode ? `, agree AS (INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT order_pk, 'agree', $7 FROM cur)` : '';
  const changes = `SELECT cur.id AS cabinet_id, cur.key AS cabinet_key, cur.locker_id, $5::text AS door,
      CASE WHEN $5 = 'front' THEN cur.state ELSE cur.rear_load_status END AS old_state,
      CASE WHEN $5 = 'front' THEN u.state ELSE u.rear_load_status END AS new_state
    FROM cur JOIN updated u ON u.id = cur.id`;
  // Commanded closed counts even when the door was already closed: staff closed it on the order.
  const closes = `SELECT cur.id AS cabinet_id, cur.key AS cabinet_key, $5::text AS door FROM cur JOIN updated u ON u.id = cur.id
    WHERE $10::text = 'close' AND $6::text = 'closed'`;
  const [row] = await q.query<CabinetRow>(
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
       SELECT $9::uuid, cur.id, cur.locker_id, $10, $5, $11, $12, coalesce($13, cur.order_number), $14, $2, $3, $15, $7, $16,
         CASE WHEN $17::boolean THEN NULL ELSE $7::timestamptz END
       FROM cur
     ), ev AS (${insertEventsFrom(q, doorEvents(changes, '$7::timestamptz'))}),
     -- Carried out now: a delayed close the command overtook is called off, and the locker is told
     -- through the device outbox (delayed: the job does both when it runs).
     canceled AS (${callOffJobsFrom(`SELECT ${delayedCloseKeySql('cur.id', '$5::text')} FROM cur WHERE NOT $17::boolean AND EXISTS (SELECT 1 FROM overtaken)`, '$7::timestamptz')}),
     sent AS (${insertDeviceMessagesFrom(
       q,
       `SELECT ${lockerCommandTopicSql('u.locker_id')},
       ${lockerCommandMessageSql('u', { commandId: '$9', command: '$10', door: '$5', issuedAt: '$18' })}, $9, $7 FROM updated u WHERE NOT $17::boolean`,
     )}),
     ${readyOrders(closes, '$7::timestamptz', (select) => insertEventsFrom(q, select))}${agree}
     SELECT ${CABINET_COLUMNS} FROM updated c`,
    [
      byCode ? (cmd.target as { openCode: string }).openCode : (cmd.target as { cabinetId: number }).cabinetId,
      cmd.size,
      cmd.thermalMode,
      cmd.enabled,
      cmd.door,
      cmd.doorState,
      now,
      cmd.overtakes,
      cmd.commandId,
      cmd.command,
      cmd.source,
      cmd.actedBy,
      cmd.orderId,
      cmd.reason,
      cmd.delaySeconds,
      cmd.runAt,
      cmd.delayed,
      isoMicros(now),
    ],
  );
  return row;
}

/** The delayed close of a command, carried out now with its door's event, and sent to the locker;
 * false when another command on that door overtook it. */
export async function executeDelayedClose(q: Tx, commandId: string, now: Date): Promise<boolean> {
  const changes = `SELECT b.id AS cabinet_id, b.key AS cabinet_key, b.locker_id, cmd.door,
      CASE WHEN cmd.door = 'front' THEN b.state ELSE b.rear_load_status END AS old_state, 'closed' AS new_state
    FROM prior b JOIN cmd ON cmd.cabinet_id = b.id`;
  const closes = 'SELECT b.id AS cabinet_id, b.key AS cabinet_key, cmd.door FROM prior b JOIN cmd ON cmd.cabinet_id = b.id';
  const done = await q.query(
    `WITH cmd AS (
       UPDATE cabinet_commands SET executed_at = $2
       WHERE command_id = $1::uuid AND executed_at IS NULL AND canceled_at IS NULL
       RETURNING cabinet_id, door
     ), prior AS (
       SELECT c.id, c.key, c.locker_id, c.state, c.rear_load_status FROM cabinets c JOIN cmd ON c.id = cmd.cabinet_id FOR NO KEY UPDATE OF c
     ), closed AS (
       UPDATE cabinets c SET
         state = CASE WHEN cmd.door = 'front' THEN 'closed' ELSE c.state END,
         rear_load_status = CASE WHEN cmd.door = 'rear' THEN 'closed' ELSE c.rear_load_status END,
         updated_at = CASE WHEN (cmd.door = 'front' AND c.state <> 'closed') OR (cmd.door = 'rear' AND c.rear_load_status <> 'closed')
                           THEN $2::timestamptz ELSE c.updated_at END
       FROM cmd, prior b WHERE c.id = cmd.cabinet_id AND b.id = c.id
       RETURNING c.*
     ), ev AS (${insertEventsFrom(q, doorEvents(changes, '$2::timestamptz'))}),
     sent AS (${insertDeviceMessagesFrom(
       q,
       `SELECT ${lockerCommandTopicSql('c.locker_id')},
       ${lockerCommandMessageSql('c', { commandId: '$1', command: `'close'`, door: 'cmd.door', issuedAt: '$3' })}, $1, $2 FROM closed c, cmd`,
     )}),
     ${readyOrders(closes, '$2::timestamptz', (select) => insertEventsFrom(q, select))}
     SELECT 1 FROM closed`,
    [commandId, now, isoMicros(now)],
  );
  return done.length > 0;
}

/**
 * L7 in one statement, all or nothing: the door states (with an event per door that changed), the
 * locker's info and last-seen time and the device's event are written only when every reported
 * key is a cabinet of this locker. Returns the keys that are not. The reported cabinets are locked
 * as they are read, so the states compared are the latest; a cabinet whose doors are reported as
 * they already are is not rewritten (most reports change nothing).
 */
export async function applyStatusReport(q: Tx, r: StatusReport, now: Date): Promise<number[]> {
  const changes = `SELECT d.id AS cabinet_id, d.key AS cabinet_key, d.locker_id, x.door, x.old_state, x.new_state
    FROM doors d CROSS JOIN LATERAL (VALUES ('front', d.old_front, d.state), ('rear', d.old_rear, d.rear_load_status)) AS x(door, old_state, new_state)`;
  // A report makes an order ready when it tells that the door went from open to closed.
  const closes = `SELECT ch.cabinet_id, ch.cabinet_key, ch.door FROM (${changes}) ch WHERE ch.old_state = 'open' AND ch.new_state = 'closed'`;
  const [row] = await q.query<{ unknown_keys: number[]; events: number }>(
    `WITH reported AS (
       SELECT * FROM unnest($2::int[], $3::text[], $4::text[]) AS x(key, front, rear)
     ), known AS (
       SELECT c.id, c.key, c.state, c.rear_load_status FROM cabinets c WHERE c.locker_id = $1 AND c.key = ANY($2::int[])
       ORDER BY c.id FOR NO KEY UPDATE
     ), verdict AS (
       SELECT coalesce(array_agg(r.key) FILTER (WHERE k.key IS NULL), '{}') AS unknown_keys
       FROM reported r LEFT JOIN known k ON k.key = r.key
     ), doors AS (
       UPDATE cabinets c SET state = coalesce(r.front, c.state), rear_load_status = coalesce(r.rear, c.rear_load_status), updated_at = $8
       FROM reported r JOIN known k ON k.key = r.key, verdict v
       WHERE cardinality(v.unknown_keys) = 0 AND c.id = k.id
         AND (coalesce(r.front, k.state), coalesce(r.rear, k.rear_load_status)) IS DISTINCT FROM (k.state, k.rear_load_status)
       RETURNING c.id, c.key, c.locker_id, c.state, c.rear_load_status, k.state AS old_front, k.rear_load_status AS old_rear
     ), seen AS (
       UPDATE lockers l SET ip = coalesce($5, l.ip), firmware = coalesce($6, l.firmware), last_seen_at = $8,
         updated_at = CASE WHEN (coalesce($5, l.ip), coalesce($6, l.firmware)) IS DISTINCT FROM (l.ip, l.firmware)
                           THEN $8::timestamptz ELSE l.updated_at END
       FROM verdict v WHERE cardinality(v.unknown_keys) = 0 AND l.id = $1
     ), device_event AS (
       INSERT INTO locker_status_events (locker_id, type, event, created_at)
       SELECT $1, $7, $9::jsonb, $8 FROM verdict v WHERE cardinality(v.unknown_keys) = 0 AND $7::text IS NOT NULL
     ), ev AS (${insertEventsReturningFrom(doorEvents(changes, '$8::timestamptz'))}),
     ${readyOrders(closes, '$8::timestamptz', insertEventsReturningFrom)}
     SELECT unknown_keys, ((SELECT count(*) FROM ev) + (SELECT count(*) FROM ready_ev))::int AS events FROM verdict`,
    [r.lockerId, r.keys, r.front, r.rear, r.ip, r.firmware, r.eventType, now, r.event === null ? null : JSON.stringify(r.event)],
  );
  // Most reports change no door: only those that wrote events wake the log's subscribers.
  if ((row?.events ?? 0) > 0) q.signal('events');
  return row?.unknown_keys ?? [];
}
