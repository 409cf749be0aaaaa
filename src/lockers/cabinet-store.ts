// SQL of the cabinets: a staff or customer command, the delayed close, the locker's own status
// report. Each is one statement that changes the doors, writes the event of each door that
// changed and makes ready the order a close of its loading door completes (contract sections 11
// and 13). The cabinet row is locked first, so a door's state before a change is read under that
// lock and each change is one event however requests race.
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes, type Sql } from '../db/sql.ts';
import { isoMicros } from '../db/timestamps.ts';
import { queueDeviceMessages } from '../devices/outbox.ts';
import { lockerCommandMessageSql, lockerCommandTopicSql } from '../devices/wire.ts';
import { insertEvents, insertEventsReturning } from '../events/log.ts';
import { callOffJobs } from '../jobs/queue.ts';
import { delayedCloseKeySql } from './rules.ts';
import { orderEvent } from './store.ts';
import type { CabinetChange, CabinetRow, CommandTarget, Door, StatusReport } from './types.ts';

const CABINET_COLUMNS = sql.raw(`c.id, c.key, c.created_at, c.updated_at, c.name, c.locker_id, c.state, c.enabled, c.size,
  c.occupied, c.released_at, c.thermal_mode, c.rear_load_status, c.tag, c.cool_off_until`);

/**
 * The events of doors that changed: `changes` has cabinet_id, cabinet_key, locker_id, door,
 * old_state, new_state; a door left as it was writes nothing. The order is the cabinet's open one.
 */
const doorEvents = (changes: Sql, at: Sql): Sql => sql`
  SELECT 'locker', CASE WHEN ch.new_state = 'open' THEN 'cabinet_opened' ELSE 'cabinet_closed' END,
    l.organization_id, l.location_id, ch.cabinet_id::text,
    jsonb_build_object('locker_id', l.id, 'cabinet_id', ch.cabinet_id, 'cabinet_key', ch.cabinet_key, 'door', ch.door,
      'order_id', o.order_id, 'id', o.id),
    format('The %s door of cabinet %s of %s %s.', ch.door, ch.cabinet_key, l.name, CASE WHEN ch.new_state = 'open' THEN 'opened' ELSE 'closed' END),
    ${at}
  FROM (${changes}) ch JOIN lockers l ON l.id = ch.locker_id
    LEFT JOIN locker_orders o ON o.cabinet_id = ch.cabinet_id AND o.completed_at IS NULL AND o.canceled_at IS NULL
  WHERE ch.new_state IS DISTINCT FROM ch.old_state`;

/**
 * The CTEs `ready` and `ready_ev`: the orders that a close of their door makes ready (contract
 * section 13), with their `order_ready` events written by `insert`. `closes` has cabinet_id,
 * cabinet_key and door of each closed door; an order is made ready once, only while open (not yet
 * ready, not expired), and by its loading door (rear for a rearload order, else front).
 */
const makeOrdersReady = (closes: Sql, at: Sql, insert: (rows: Sql) => Sql): Sql[] => [
  cte(
    'ready',
    sql`
    -- The cabinet's open order found through its partial unique index, whatever the plan: a join on
    -- cabinet_id over the closes (whose row count the planner cannot know) may scan every order.
    UPDATE locker_orders o SET ready_at = ${at}
    FROM (SELECT cl.cabinet_key, cl.door,
            (SELECT x.id FROM locker_orders x WHERE x.cabinet_id = cl.cabinet_id AND x.completed_at IS NULL AND x.canceled_at IS NULL) AS order_pk
          FROM (${closes}) cl) AS c
    WHERE o.id = c.order_pk AND c.door = CASE WHEN o.rearload THEN 'rear' ELSE 'front' END
      AND o.ready_at IS NULL AND o.expired_at IS NULL
    RETURNING o.*, c.cabinet_key`,
  ),
  cte('ready_ev', insert(orderEvent('order_ready', 'is ready in', sql`SELECT * FROM ready`, at))),
];

/** L3: the cabinet, locked for the rest of the transaction. */
export async function lockCabinetForCommand(q: Queryable, cabinetId: number): Promise<CommandTarget | undefined> {
  const [row] = await q.run<CommandTarget>(
    sql`SELECT ${CABINET_COLUMNS}, l.rear_loading_available,
       (SELECT o.order_id FROM locker_orders o WHERE o.cabinet_id = c.id AND o.canceled_at IS NULL ORDER BY o.id DESC LIMIT 1) AS current_order_id
     FROM cabinets c JOIN lockers l ON l.id = c.locker_id
     WHERE c.id = ${cabinetId}
     FOR UPDATE OF c`,
  );
  return row;
}

/** L5 here / disagree: records it on the open order of the code; its cabinet, or undefined. */
export async function recordCustomerAction(q: Queryable, openCode: string, kind: 'here' | 'disagree', now: Date): Promise<CabinetRow | undefined> {
  const [row] = await q.run<CabinetRow>(
    withCtes(
      [
        cte(
          'o',
          sql`SELECT id, cabinet_id FROM locker_orders WHERE open_code = ${openCode} AND completed_at IS NULL AND canceled_at IS NULL FOR NO KEY UPDATE`,
        ),
        cte('ev', sql`INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT id, ${kind}, ${now} FROM o`),
      ],
      sql`SELECT ${CABINET_COLUMNS} FROM cabinets c JOIN o ON o.cabinet_id = c.id`,
    ),
  );
  return row;
}

// --- a command carried out: the CTEs of applyCabinetCommand, over `cur` (the cabinet before) and `updated` (after) ---

/** cur: the commanded cabinet, by id (L3 locked it already), or that of the open order of a code, locked with its order (L5). */
const commandedCabinet = (target: CabinetChange['target']): Sql =>
  'openCode' in target
    ? sql`SELECT c.*, o.id AS order_pk, o.order_id::text AS order_number FROM cabinets c JOIN locker_orders o ON o.cabinet_id = c.id
       WHERE o.open_code = ${target.openCode} AND o.completed_at IS NULL AND o.canceled_at IS NULL FOR NO KEY UPDATE OF c, o`
    : sql`SELECT c.*, NULL::integer AS order_pk, NULL::text AS order_number FROM cabinets c WHERE c.id = ${target.cabinetId}`;

/** next: the cabinet as the command sets it (a null leaves a field as it is). */
const cabinetAfter = (cmd: CabinetChange): Sql => sql`
  SELECT cur.id,
    coalesce(${cmd.size}::text, cur.size) AS size, coalesce(${cmd.thermalMode}::text, cur.thermal_mode) AS thermal_mode,
    coalesce(${cmd.enabled}::boolean, cur.enabled) AS enabled,
    ${cmd.door === 'front' ? sql`coalesce(${cmd.doorState}::text, cur.state)` : sql`cur.state`} AS state,
    ${cmd.door === 'rear' ? sql`coalesce(${cmd.doorState}::text, cur.rear_load_status)` : sql`cur.rear_load_status`} AS rear_load_status
  FROM cur`;

/** updated: the cabinet written as `next` has it; updated_at moves only when something changed. */
const writeCabinet = (at: Sql): Sql => sql`
  UPDATE cabinets c SET size = n.size, thermal_mode = n.thermal_mode, enabled = n.enabled, state = n.state,
    rear_load_status = n.rear_load_status,
    updated_at = CASE WHEN (n.size, n.thermal_mode, n.enabled, n.state, n.rear_load_status)
                          IS DISTINCT FROM (c.size, c.thermal_mode, c.enabled, c.state, c.rear_load_status)
                     THEN ${at} ELSE c.updated_at END
  FROM next n WHERE c.id = n.id
  RETURNING c.*`;

/** overtaken: the delayed closes still waiting on the door, canceled. */
const cancelOvertakenCloses = (door: Sql, at: Sql): Sql => sql`
  UPDATE cabinet_commands cc SET canceled_at = ${at} FROM cur
  WHERE cc.cabinet_id = cur.id AND cc.door = ${door} AND cc.executed_at IS NULL AND cc.canceled_at IS NULL
  RETURNING cc.id`;

/** logged: the command with who gave it, executed now or waiting for its job. */
const logCommand = (cmd: CabinetChange, at: Sql): Sql => sql`
  INSERT INTO cabinet_commands (command_id, cabinet_id, locker_id, command, door, source, acted_by, order_id, reason,
    size, thermal_mode, delay_seconds, created_at, run_at, executed_at)
  SELECT ${cmd.commandId}::uuid, cur.id, cur.locker_id, ${cmd.command}, ${cmd.door}, ${cmd.source}, ${cmd.actedBy},
    coalesce(${cmd.orderId}::text, cur.order_number), ${cmd.reason}, ${cmd.size}, ${cmd.thermalMode}, ${cmd.delaySeconds}, ${at}, ${cmd.runAt},
    ${cmd.delayed ? sql`NULL::timestamptz` : at}
  FROM cur`;

/** The commanded door's states before and after (cabinet_id, cabinet_key, locker_id, door, old_state, new_state). */
const commandedDoorChange = (door: Door): Sql => {
  const state = sql.raw(door === 'front' ? 'state' : 'rear_load_status');
  return sql`SELECT cur.id AS cabinet_id, cur.key AS cabinet_key, cur.locker_id, ${door}::text AS door, cur.${state} AS old_state, u.${state} AS new_state
    FROM cur JOIN updated u ON u.id = cur.id`;
};

/** The commanded door as closed; commanded closed counts even when it was already: staff closed it on the order. */
const commandedClose = (door: Sql): Sql =>
  sql`SELECT cur.id AS cabinet_id, cur.key AS cabinet_key, ${door}::text AS door FROM cur JOIN updated u ON u.id = cur.id`;

/** The key of the delayed close the command overtook on its door, if it overtook one. */
const overtakenCloseKey = (door: Sql): Sql => sql`SELECT ${delayedCloseKeySql(sql`cur.id`, door)} FROM cur WHERE EXISTS (SELECT 1 FROM overtaken)`;

/** The command as the locker receives it, from the cabinet as `updated` has it. */
const commandToLocker = (cmd: CabinetChange, now: Date): Sql => sql`
  SELECT ${lockerCommandTopicSql(sql`u.locker_id`)},
    ${lockerCommandMessageSql(sql`u`, { commandId: sql`${cmd.commandId}`, command: sql`${cmd.command}`, door: sql`${cmd.door}`, issuedAt: sql`${isoMicros(now)}` })},
    ${cmd.commandId}, ${now}
  FROM updated u`;

/**
 * L3 and L5 agree in one statement: changes the cabinet, logs the command, cancels a delayed close
 * it overtakes and writes the door's event; carried out now (not delayed), it also calls off that
 * delayed close's job and sends the command to the locker through the device outbox, so that L5
 * agree is one round trip. undefined: no such cabinet, or no open order with the code.
 */
export async function applyCabinetCommand(q: Tx, cmd: CabinetChange, now: Date): Promise<CabinetRow | undefined> {
  const at = sql`${now}::timestamptz`;
  const door = sql`${cmd.door}`;
  const carriedOutNow = !cmd.delayed;
  const [row] = await q.run<CabinetRow>(
    withCtes(
      [
        cte('cur', commandedCabinet(cmd.target)),
        cte('next', cabinetAfter(cmd)),
        cte('updated', writeCabinet(at)),
        ...(cmd.overtakes ? [cte('overtaken', cancelOvertakenCloses(door, at))] : []),
        cte('logged', logCommand(cmd, at)),
        cte('ev', insertEvents(doorEvents(commandedDoorChange(cmd.door), at))),
        // Delayed, the job calls off nothing and tells the locker when it runs.
        ...(carriedOutNow && cmd.overtakes ? [cte('called_off', callOffJobs(overtakenCloseKey(door), at))] : []),
        ...(carriedOutNow ? [cte('sent', queueDeviceMessages(commandToLocker(cmd, now)))] : []),
        ...(cmd.command === 'close' && cmd.doorState === 'closed' ? makeOrdersReady(commandedClose(door), at, insertEvents) : []),
        ...('openCode' in cmd.target
          ? [cte('agree', sql`INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT order_pk, 'agree', ${at} FROM cur`)]
          : []),
      ],
      sql`SELECT ${CABINET_COLUMNS} FROM updated c`,
    ),
  );
  return row;
}

// --- the delayed close: the CTEs of executeDelayedClose, over `cmd` (the command), `prior` (the cabinet before) and `closed` (after) ---

/** cmd: the delayed close, marked executed unless another command overtook it. */
const executeCommand = (commandId: string, at: Sql): Sql => sql`
  UPDATE cabinet_commands SET executed_at = ${at}
  WHERE command_id = ${commandId}::uuid AND executed_at IS NULL AND canceled_at IS NULL
  RETURNING cabinet_id, door`;

/** closed: the command's door closed; updated_at moves only when it was not. */
const closeDoor = (at: Sql): Sql => sql`
  UPDATE cabinets c SET
    state = CASE WHEN cmd.door = 'front' THEN 'closed' ELSE c.state END,
    rear_load_status = CASE WHEN cmd.door = 'rear' THEN 'closed' ELSE c.rear_load_status END,
    updated_at = CASE WHEN (cmd.door = 'front' AND c.state <> 'closed') OR (cmd.door = 'rear' AND c.rear_load_status <> 'closed')
                      THEN ${at} ELSE c.updated_at END
  FROM cmd, prior b WHERE c.id = cmd.cabinet_id AND b.id = c.id
  RETURNING c.*`;

/** The delayed close's states before and after. */
const closedDoorChange = sql`SELECT b.id AS cabinet_id, b.key AS cabinet_key, b.locker_id, cmd.door,
    CASE WHEN cmd.door = 'front' THEN b.state ELSE b.rear_load_status END AS old_state, 'closed' AS new_state
  FROM prior b JOIN cmd ON cmd.cabinet_id = b.id`;

/** The delayed close as the locker receives it. */
const closeToLocker = (commandId: string, now: Date): Sql => sql`
  SELECT ${lockerCommandTopicSql(sql`c.locker_id`)},
    ${lockerCommandMessageSql(sql`c`, { commandId: sql`${commandId}`, command: sql`'close'`, door: sql`cmd.door`, issuedAt: sql`${isoMicros(now)}` })},
    ${commandId}, ${now}
  FROM closed c, cmd`;

/** The delayed close of a command, carried out now with its door's event, and sent to the locker;
 * false when another command on that door overtook it. */
export async function executeDelayedClose(q: Tx, commandId: string, now: Date): Promise<boolean> {
  const at = sql`${now}::timestamptz`;
  const done = await q.run(
    withCtes(
      [
        cte('cmd', executeCommand(commandId, at)),
        cte(
          'prior',
          sql`SELECT c.id, c.key, c.locker_id, c.state, c.rear_load_status FROM cabinets c JOIN cmd ON c.id = cmd.cabinet_id FOR NO KEY UPDATE OF c`,
        ),
        cte('closed', closeDoor(at)),
        cte('ev', insertEvents(doorEvents(closedDoorChange, at))),
        cte('sent', queueDeviceMessages(closeToLocker(commandId, now))),
        ...makeOrdersReady(sql`SELECT b.id AS cabinet_id, b.key AS cabinet_key, cmd.door FROM prior b JOIN cmd ON cmd.cabinet_id = b.id`, at, insertEvents),
      ],
      sql`SELECT 1 FROM closed`,
    ),
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
  const at = sql`${now}::timestamptz`;
  const changes = sql`SELECT d.id AS cabinet_id, d.key AS cabinet_key, d.locker_id, x.door, x.old_state, x.new_state
    FROM doors d CROSS JOIN LATERAL (VALUES ('front', d.old_front, d.state), ('rear', d.old_rear, d.rear_load_status)) AS x(door, old_state, new_state)`;
  // A report makes an order ready when it tells that the door went from open to closed.
  const closes = sql`SELECT ch.cabinet_id, ch.cabinet_key, ch.door FROM (${changes}) ch WHERE ch.old_state = 'open' AND ch.new_state = 'closed'`;
  const complete = sql`cardinality(v.unknown_keys) = 0`;
  const ip = sql`${r.ip}::text`;
  const firmware = sql`${r.firmware}::text`;
  const [row] = await q.run<{ unknown_keys: number[]; events: number }>(
    withCtes(
      [
        cte('reported', sql`SELECT * FROM unnest(${r.keys}::int[], ${r.front}::text[], ${r.rear}::text[]) AS x(key, front, rear)`),
        cte(
          'known',
          sql`SELECT c.id, c.key, c.state, c.rear_load_status FROM cabinets c WHERE c.locker_id = ${r.lockerId} AND c.key = ANY(${r.keys}::int[])
          ORDER BY c.id FOR NO KEY UPDATE`,
        ),
        cte(
          'verdict',
          sql`SELECT coalesce(array_agg(r.key) FILTER (WHERE k.key IS NULL), '{}') AS unknown_keys FROM reported r LEFT JOIN known k ON k.key = r.key`,
        ),
        cte(
          'doors',
          sql`UPDATE cabinets c SET state = coalesce(r.front, c.state), rear_load_status = coalesce(r.rear, c.rear_load_status), updated_at = ${at}
          FROM reported r JOIN known k ON k.key = r.key, verdict v
          WHERE ${complete} AND c.id = k.id
            AND (coalesce(r.front, k.state), coalesce(r.rear, k.rear_load_status)) IS DISTINCT FROM (k.state, k.rear_load_status)
          RETURNING c.id, c.key, c.locker_id, c.state, c.rear_load_status, k.state AS old_front, k.rear_load_status AS old_rear`,
        ),
        cte(
          'seen',
          sql`UPDATE lockers l SET ip = coalesce(${ip}, l.ip), firmware = coalesce(${firmware}, l.firmware), last_seen_at = ${at},
            updated_at = CASE WHEN (coalesce(${ip}, l.ip), coalesce(${firmware}, l.firmware)) IS DISTINCT FROM (l.ip, l.firmware)
                              THEN ${at} ELSE l.updated_at END
          FROM verdict v WHERE ${complete} AND l.id = ${r.lockerId}`,
        ),
        ...(r.eventType === null
          ? []
          : [
              cte(
                'device_event',
                sql`INSERT INTO locker_status_events (locker_id, type, event, created_at)
                SELECT ${r.lockerId}, ${r.eventType}, ${r.event === null ? null : JSON.stringify(r.event)}::jsonb, ${at} FROM verdict v WHERE ${complete}`,
              ),
            ]),
        cte('ev', insertEventsReturning(doorEvents(changes, at))),
        ...makeOrdersReady(closes, at, insertEventsReturning),
      ],
      sql`SELECT unknown_keys, ((SELECT count(*) FROM ev) + (SELECT count(*) FROM ready_ev))::int AS events FROM verdict`,
    ),
  );
  // Most reports change no door: only those that wrote events wake the log's subscribers.
  if ((row?.events ?? 0) > 0) q.signal('events');
  return row?.unknown_keys ?? [];
}
