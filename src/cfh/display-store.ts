// SQL of displays (C9): finding the display and its options, and its limits. Every press takes the
// display's row lock first, so the presses of one display queue and each reads what the one before
// it wrote: the limits and the one open request per browser hold whatever arrives at once (the
// unique index cfh_requests_open_per_browser, migration 037, holds the latter on its own too).
import type { Queryable } from '../db/db.ts';
import { addressWindowMs, DISPLAY_MINUTE_MS, type DisplayPressFigures } from './display-rules.ts';
import type { RequestRow } from './rows.ts';
import type { StaffNameFormat } from './rules.ts';
import { RECORD_COLUMNS } from './sql.ts';

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
  /** How the location shows a claimer's name to customers. */
  staff_name_format: StaffNameFormat;
}

/** The display whose key has this SHA-256. */
export async function findDisplay(q: Queryable, keyHash: string): Promise<DisplayRow | null> {
  const [row] = await q.query<DisplayRow>(
    `SELECT d.id, d.organization_id, d.location_id, d.name, d.option_ids, d.allow_custom_text, d.chat_channel_id,
       coalesce(l.call_button_cooldown_seconds, 120) AS cooldown_seconds, coalesce(l.language, 'en') AS language,
       l.name AS store_name, coalesce(l.staff_name_format, 'full') AS staff_name_format
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

/** Takes the display's row lock for the rest of the transaction (FOR NO KEY UPDATE: requests
 * that name it as a foreign key are not held up). */
export async function lockDisplay(q: Queryable, displayId: number): Promise<void> {
  await q.query('SELECT id FROM cfh_displays WHERE id = $1 FOR NO KEY UPDATE', [displayId]);
}

/** The browser's open request at this display (a browser has at most one). */
export async function openRequestOfBrowser(q: Queryable, displayId: number, browserDigest: string): Promise<RequestRow | null> {
  const [row] = await q.query<RequestRow>(
    `SELECT ${RECORD_COLUMNS} FROM cfh_requests r WHERE r.display_id = $1 AND r.browser_digest = $2 AND NOT r.is_closed`,
    [displayId, browserDigest],
  );
  return row ?? null;
}

/**
 * What the limits need, in one statement: the client's last accepted press, the presses of other
 * clients of its address within the address window, the display's requests of the last minute.
 * Presses older than the window decide nothing any more and are forgotten on the way, so the
 * table holds one window's clients.
 */
export async function displayPressFigures(
  q: Queryable,
  display: { id: number; cooldownSeconds: number },
  press: { client: string; address: string },
  now: Date,
): Promise<DisplayPressFigures> {
  const windowSeconds = addressWindowMs(display.cooldownSeconds) / 1000;
  const [row] = await q.query<{ client_last_at: number | null; address_presses: number[]; display_requests: number[] }>(
    `WITH stale AS (
       DELETE FROM cfh_display_presses WHERE display_id = $1 AND last_at <= $4::timestamptz - make_interval(secs => $5)
     )
     SELECT
       (SELECT extract(epoch FROM last_at)::float8 * 1000 FROM cfh_display_presses
        WHERE display_id = $1 AND client = $2 AND last_at > $4::timestamptz - make_interval(secs => $5)) AS client_last_at,
       coalesce((SELECT array_agg(extract(epoch FROM last_at)::float8 * 1000 ORDER BY last_at) FROM cfh_display_presses
        WHERE display_id = $1 AND address = $3 AND client <> $2 AND last_at > $4::timestamptz - make_interval(secs => $5)), '{}') AS address_presses,
       coalesce((SELECT array_agg(extract(epoch FROM created_at)::float8 * 1000 ORDER BY created_at) FROM cfh_requests
        WHERE display_id = $1 AND source = 'display' AND created_at > $4::timestamptz - make_interval(secs => $6)), '{}') AS display_requests`,
    [display.id, press.client, press.address, now, windowSeconds, DISPLAY_MINUTE_MS / 1000],
  );
  const dates = (ms: number[] | undefined) => (ms ?? []).map((t) => new Date(t));
  return {
    clientLastAt: row?.client_last_at == null ? null : new Date(row.client_last_at),
    addressPresses: dates(row?.address_presses),
    displayRequests: dates(row?.display_requests),
  };
}

/** Records an accepted press: the client's last press, and the address it came from. */
export async function recordDisplayPress(q: Queryable, displayId: number, press: { client: string; address: string }, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO cfh_display_presses (display_id, client, address, last_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (display_id, client) DO UPDATE SET address = EXCLUDED.address, last_at = EXCLUDED.last_at`,
    [displayId, press.client, press.address, now],
  );
}

/**
 * Forgets the browser digests of a batch of closed requests (retention): only an open request is
 * answered again to its browser, so a closed one's digest would only link one customer's requests
 * over time (index cfh_requests_closed_browser). Says how many were forgotten.
 */
export async function forgetClosedRequestBrowsers(q: Queryable, limit: number): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    `WITH f AS (
       UPDATE cfh_requests SET browser_digest = NULL WHERE id IN (
         SELECT id FROM cfh_requests WHERE browser_digest IS NOT NULL AND is_closed ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING 1)
     SELECT count(*)::int AS n FROM f`,
    [limit],
  );
  return row?.n ?? 0;
}
