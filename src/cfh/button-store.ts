// SQL of call buttons (B1, B2) and displays (C9): finding the device, its voltage, and the
// cooldowns, each a conditional update of one row so that concurrent presses queue on its lock
// and only the first passes.
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

export interface DisplayRow {
  id: number;
  organization_id: number;
  location_id: number;
  name: string;
  option_ids: number[];
  allow_custom_text: boolean;
  /** The chat channel its requests go to (copied to each). */
  chat_channel_id: string | null;
  cooldown_seconds: number;
  language: 'en' | 'fr';
  /** The location's name: the customer's page names the store, not the display. */
  store_name: string;
}

/** The display whose key has this SHA-256. */
export async function findDisplay(q: Queryable, keyHash: string): Promise<DisplayRow | null> {
  const [row] = await q.query<DisplayRow>(
    `SELECT d.id, d.organization_id, d.location_id, d.name, d.option_ids, d.allow_custom_text, d.chat_channel_id,
       coalesce(l.call_button_cooldown_seconds, 120) AS cooldown_seconds, coalesce(l.language, 'en') AS language,
       l.name AS store_name
     FROM cfh_displays d JOIN locations l ON l.id = d.location_id WHERE d.key_hash = $1 AND d.enabled AND l.enabled`,
    [keyHash],
  );
  return row ?? null;
}

export interface DisplayOption {
  id: number;
  text_en: string;
  text_fr: string;
  prompt_en: string;
  prompt_fr: string;
}

/** The display's options, in its own order. */
export async function displayOptions(q: Queryable, display: DisplayRow): Promise<DisplayOption[]> {
  return q.query<DisplayOption>(
    `SELECT o.id, o.text_en, o.text_fr, o.prompt_en, o.prompt_fr
     FROM unnest($1::int[]) WITH ORDINALITY AS x (id, n) JOIN cfh_options o ON o.id = x.id
     WHERE o.organization_id = $2 AND (o.location_id IS NULL OR o.location_id = $3) AND o.enabled
     ORDER BY x.n`,
    [display.option_ids, display.organization_id, display.location_id],
  );
}

/** C9's cooldown per display and client address: true if accepted, else the seconds left. */
export async function acceptDisplayPress(
  q: Queryable,
  displayId: number,
  client: string,
  cooldownSeconds: number,
  now: Date,
): Promise<{ accepted: true } | { accepted: false; secondsLeft: number }> {
  const [row] = await q.query<{ accepted: boolean; seconds_left: number }>(
    `WITH stale AS (
       -- Other addresses whose cooldown is over are forgotten, so the table holds one window's clients.
       DELETE FROM cfh_display_presses WHERE display_id = $1 AND client <> $2 AND last_at <= $3::timestamptz - make_interval(secs => $4)
     ), up AS (
       INSERT INTO cfh_display_presses AS p (display_id, client, last_at) VALUES ($1, $2, $3)
       ON CONFLICT (display_id, client) DO UPDATE SET last_at = EXCLUDED.last_at
       WHERE p.last_at <= $3::timestamptz - make_interval(secs => $4)
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM up) AS accepted,
       coalesce((SELECT ceil(extract(epoch FROM (p.last_at + make_interval(secs => $4) - $3::timestamptz)))::int
                 FROM cfh_display_presses p WHERE p.display_id = $1 AND p.client = $2), 0) AS seconds_left`,
    [displayId, client, now, cooldownSeconds],
  );
  if (row === undefined || row.accepted) return { accepted: true };
  return { accepted: false, secondsLeft: Math.max(1, row.seconds_left) };
}
