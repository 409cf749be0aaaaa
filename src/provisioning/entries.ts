// The rules of the store's setup, written once for the provisioning file (apply.ts, cfh.ts) and
// section 18's administration (src/admin/setup/): how each entry maps to its row (with its
// defaults), what makes an entry invalid beyond its schema, and how the service makes a key a body
// left out. A refusal names the entry's field (FieldProblem): the file says it with the entry's
// path, administration as a 422 with errors by field.
import crypto from 'node:crypto';
import { DEFAULT_STAFF_ACTION } from '../cfh/schemas.ts';
import type { Queryable } from '../db/db.ts';
import { sha256hex } from '../http/secrets.ts';
import type { CabinetEntry, CallButtonEntry, CfhOptionEntry, CfhOutcomeEntry, DisplayEntry, LocationEntry, LockerEntry } from './schema.ts';
import type { Column } from './upsert.ts';
import type { Static } from 'typebox';

/** An entry's field is not valid; `field` is relative to the entry ("time_zone", "option_ids[1]"). */
export class FieldProblem extends Error {
  readonly field: string;
  readonly problem: string;
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

export type Location = Static<typeof LocationEntry>;
export type Locker = Omit<Static<typeof LockerEntry>, 'cabinets'>;
export type Cabinet = Static<typeof CabinetEntry>;
export type CfhOption = Static<typeof CfhOptionEntry>;
export type CfhOutcome = Static<typeof CfhOutcomeEntry>;
export type CallButton = Static<typeof CallButtonEntry>;
export type Display = Static<typeof DisplayEntry>;
export type Columns = Record<string, Column>;

/** A key the service makes (a locker's api_key, a display's key): 256 random bits, URL-safe. */
export const makeKey = (): string => crypto.randomBytes(32).toString('base64url');

/** An IANA time zone name as Intl knows it (not an offset like +05:00, which has no rules). */
export function isTimeZone(name: string): boolean {
  if (!name.includes('/') && name !== 'UTC') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A location's time zone: Intl's and the database's (which computes its reports' day boundaries). */
export async function checkTimeZone(q: Queryable, timeZone: string | null | undefined): Promise<void> {
  if (timeZone === null || timeZone === undefined) return;
  if (!isTimeZone(timeZone)) throw new FieldProblem('time_zone', `"${timeZone}" is not an IANA time zone`);
  await q.query('SELECT now() AT TIME ZONE $1', [timeZone]);
}

/** An option a location may use: of its organization, for every location or for this one. */
export async function checkOption(q: Queryable, field: string, optionId: number, organizationId: number, locationId: number): Promise<void> {
  const rows = await q.query('SELECT 1 FROM cfh_options WHERE id = $1 AND organization_id = $2 AND (location_id IS NULL OR location_id = $3)', [
    optionId,
    organizationId,
    locationId,
  ]);
  if (rows.length === 0) throw new FieldProblem(field, `option ${optionId} is not an option of location ${locationId}`);
}

/** A locker's cabinets: one key each. */
export function checkCabinetKeys(cabinets: readonly Pick<Cabinet, 'key'>[]): void {
  const seen = new Set<number>();
  for (const [j, c] of cabinets.entries()) {
    if (seen.has(c.key)) throw new FieldProblem(`cabinets[${j}].key`, `cabinet key ${c.key} is twice in this locker`);
    seen.add(c.key);
  }
}

// Each kind's row. `enabled` absent keeps what the row has (a file that predates it never
// re-enables what administration retired), so it is written on insert only unless given.
const enabledColumn = (enabled: boolean | undefined): Column => ({ value: enabled ?? true, insertOnly: enabled === undefined });

export function locationColumns(l: Location): Columns {
  return {
    organization_id: { value: l.organization_id },
    name: { value: l.name },
    cfh_timeout_seconds: { value: l.cfh_timeout_seconds ?? null, cast: 'int' },
    store_number: { value: l.store_number ?? null, cast: 'text' },
    locker_pickup_hours: { value: l.locker_pickup_hours ?? null, cast: 'numeric' },
    locker_reminder_hours: { value: l.locker_reminder_hours ?? null, cast: 'numeric' },
    time_zone: { value: l.time_zone ?? null, cast: 'text' },
    cfh_escalation_seconds: { value: l.cfh_escalation_seconds ?? null, cast: 'int' },
    cfh_reminder_seconds: { value: l.cfh_reminder_seconds ?? null, cast: 'int' },
    cfh_reminder_claimed_seconds: { value: l.cfh_reminder_claimed_seconds ?? null, cast: 'int' },
    cfh_reminder_cap_seconds: { value: l.cfh_reminder_cap_seconds ?? null, cast: 'int' },
    cfh_auto_complete_seconds: { value: l.cfh_auto_complete_seconds ?? null, cast: 'int' },
    staff_name_format: { value: l.staff_name_format ?? null, cast: 'text' },
    call_button_cooldown_seconds: { value: l.call_button_cooldown_seconds ?? null, cast: 'int' },
    language: { value: l.language ?? null, cast: 'text' },
    enabled: enabledColumn(l.enabled),
  };
}

/** A locker's row; `apiKey` null keeps the key it has (a known locker) — never for a new one. */
export function lockerColumns(k: Locker, organizationId: number, apiKey: string | null): Columns {
  const key: Columns = apiKey === null ? {} : { api_key: { value: apiKey, uncompared: true }, api_key_hash: { value: sha256hex(apiKey) } };
  return {
    organization_id: { value: organizationId },
    location_id: { value: k.location_id },
    name: { value: k.name },
    version: { value: k.version ?? 2 },
    rear_loading_available: { value: k.rear_loading_available ?? false },
    timer: { value: k.timer ?? 30 },
    ...key,
    enabled: enabledColumn(k.enabled),
  };
}

/** A cabinet's row. From the file, size, thermal_mode and enabled are where a cabinet starts (L3
 * owns them afterwards, so applying the file again does not undo a resize or a disable);
 * administration sets them. */
export function cabinetColumns(c: Cabinet, lockerId: number, from: 'file' | 'admin'): Columns {
  const started = from === 'file';
  return {
    locker_id: { value: lockerId },
    key: { value: c.key },
    name: { value: c.name ?? null, cast: 'text' },
    size: { value: c.size ?? 'medium', insertOnly: started },
    thermal_mode: { value: c.thermal_mode ?? 'ambient', insertOnly: started },
    tag: { value: c.tag ?? null, cast: 'text' },
    enabled: { value: c.enabled ?? true, insertOnly: started },
  };
}

export function optionColumns(o: CfhOption): Columns {
  return {
    organization_id: { value: o.organization_id },
    location_id: { value: o.location_id ?? null, cast: 'int' },
    text_en: { value: o.text_en },
    text_fr: { value: o.text_fr },
    prompt_en: { value: o.prompt_en },
    prompt_fr: { value: o.prompt_fr },
    staff_action: { value: o.staff_action ?? DEFAULT_STAFF_ACTION },
    require_scan: { value: o.require_scan ?? false },
    enabled: enabledColumn(o.enabled),
  };
}

export function outcomeColumns(o: CfhOutcome): Columns {
  return {
    location_id: { value: o.location_id },
    key: { value: o.key },
    text_en: { value: o.text_en },
    text_fr: { value: o.text_fr },
    enabled: enabledColumn(o.enabled),
  };
}

export function buttonColumns(b: CallButton, organizationId: number): Columns {
  return {
    organization_id: { value: organizationId },
    location_id: { value: b.location_id },
    option_id: { value: b.option_id },
    name: { value: b.name },
    device_key: { value: b.device_key },
    chat_channel_id: { value: b.chat_channel_id ?? null, cast: 'text' },
    require_scan: { value: b.require_scan ?? false },
    enabled: enabledColumn(b.enabled),
  };
}

/** A display's row; `key` null keeps the key it has (a known display) — never for a new one. */
export function displayColumns(d: Display, organizationId: number, key: string | null): Columns {
  return {
    organization_id: { value: organizationId },
    location_id: { value: d.location_id },
    name: { value: d.name },
    ...(key === null ? {} : { key_hash: { value: sha256hex(key) } }),
    option_ids: { value: d.option_ids, cast: 'int[]' },
    allow_custom_text: { value: d.allow_custom_text ?? false },
    chat_channel_id: { value: d.chat_channel_id ?? null, cast: 'text' },
    require_scan: { value: d.require_scan ?? false },
    enabled: enabledColumn(d.enabled),
  };
}

/** A button's and a display's options: each an option of its location. */
export async function checkDeviceOptions(q: Queryable, organizationId: number, d: { location_id: number; option_ids: readonly number[] }): Promise<void> {
  for (const [j, optionId] of d.option_ids.entries()) await checkOption(q, `option_ids[${j}]`, optionId, organizationId, d.location_id);
}
