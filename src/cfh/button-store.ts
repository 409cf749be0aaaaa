// SQL of call buttons (B1, B2): finding the button, its voltage, and the cooldown, a conditional
// update of its row so that concurrent presses queue on its lock and only the first passes.
// Displays (C9) are display-store.ts's.
import type { ApiTokenActor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';

export interface ButtonRow {
  id: number;
  organization_id: number;
  location_id: number;
  option_id: number;
  name: string;
  device_key: string;
  /** The chat channel its requests go to (copied to each). */
  chat_channel_id: string | null;
  battery_low: boolean;
  cooldown_seconds: number;
}

/** The button within the hub's reach with this MAC address, any case; locked. */
export async function lockButton(q: Queryable, hub: ApiTokenActor, deviceKey: string): Promise<ButtonRow | null> {
  const [row] = await q.run<ButtonRow>(
    sql`SELECT b.id, b.organization_id, b.location_id, b.option_id, b.name, b.device_key, b.chat_channel_id, b.battery_low,
       coalesce(l.call_button_cooldown_seconds, 120) AS cooldown_seconds
     FROM call_buttons b JOIN locations l ON l.id = b.location_id
     WHERE ${reachSql(hub, sql.raw('b'))} AND upper(b.device_key) = upper(${deviceKey}) AND b.enabled AND l.enabled
     FOR UPDATE OF b`,
  );
  return row ?? null;
}

/** Battery voltage below which a button reports battery_low (contract section 14). */
export const BATTERY_LOW_VOLTS = 2.4;

/**
 * Records a voltage report; the first report below 2.4 V since the button was last above it
 * writes battery_low (once, until it rises again).
 */
export async function recordVoltage(q: Tx, button: ButtonRow, voltage: number, now: Date): Promise<void> {
  const low = voltage < BATTERY_LOW_VOLTS;
  const warns = low && !button.battery_low;
  const at = sql`${now}::timestamptz`;
  // Only a warning writes an event, so only a warning's statement wakes the log's subscribers.
  const warning = sql`SELECT 'device', 'battery_low', b.organization_id, b.location_id, b.id::text,
      jsonb_build_object('kind', 'call_button', 'id', b.id, 'voltage', b.voltage),
      format('Call button %s (%s) battery is low: %s V.', b.id, b.name, b.voltage), ${at} FROM b`;
  await q.run(
    withCtes(
      [
        cte(
          'b',
          sql`UPDATE call_buttons SET voltage = ${voltage}, voltage_at = ${at}, battery_low = ${low} WHERE id = ${button.id}
          RETURNING id, organization_id, location_id, name, voltage`,
        ),
        ...(warns ? [cte('ev', insertEvents(warning))] : []),
      ],
      sql`SELECT id FROM b`,
    ),
  );
}

/**
 * The press's cooldown: true if this press is accepted (the button's last accepted press is at
 * least cooldown seconds old); otherwise the seconds left.
 */
export async function acceptPress(q: Queryable, button: ButtonRow, now: Date): Promise<{ accepted: true } | { accepted: false; secondsLeft: number }> {
  const [row] = await q.query<{ accepted: boolean; seconds_left: number }>(
    `WITH up AS (
       UPDATE call_buttons SET last_press_at = $2
       WHERE id = $1 AND (last_press_at IS NULL OR last_press_at <= $2::timestamptz - make_interval(secs => $3))
       RETURNING id
     )
     SELECT EXISTS (SELECT 1 FROM up) AS accepted,
       coalesce((SELECT ceil(extract(epoch FROM (c.last_press_at + make_interval(secs => $3) - $2::timestamptz)))::int
                 FROM call_buttons c WHERE c.id = $1), 0) AS seconds_left`,
    [button.id, now, button.cooldown_seconds],
  );
  if (row === undefined || row.accepted) return { accepted: true };
  return { accepted: false, secondsLeft: Math.max(1, row.seconds_left) };
}
