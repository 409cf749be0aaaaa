// Applies a provisioning file: validated whole first, then upserted by id in one transaction, so a
// broken file changes nothing and applying the same file twice changes nothing the second time.
// Each entry is inserted if new (ON CONFLICT DO NOTHING) and otherwise updated only where it
// differs, in one statement: an unchanged row is neither written nor locked. (INSERT ... ON
// CONFLICT DO UPDATE locks every row it meets, even those its WHERE leaves alone; an instance
// starting with PROVISION_FILE while others serve orders then held every locker and cabinet of the
// file, and deadlocked with an order that held a cabinet and needed its locker.)
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { EVENT_TYPES } from '../events/log.ts';
import { makeAjv } from '../http/validation.ts';
import { sha256hex } from '../http/secrets.ts';
import { targetUrlProblem } from '../webhooks/rules.ts';
import { applyCfhDevices, applyCfhLocationSettings } from './cfh.ts';
import { ProvisioningFile } from './schema.ts';
import { closedSchema, explainIssues, explainRefusal } from './errors.ts';

export class ProvisioningError extends Error {}

// Closed: an unknown key is refused (with the name it most likely meant), not silently dropped.
const validate = makeAjv({ coerceTypes: false, verbose: true }).compile<ProvisioningFile>(closedSchema(ProvisioningFile));

export function parseProvisioning(input: unknown): ProvisioningFile {
  if (validate(input)) return input;
  throw new ProvisioningError(explainIssues(validate.errors ?? []).slice(0, 10).join('; '));
}

export interface ProvisioningSummary {
  organizations: number;
  locations: number;
  lockers: number;
  cabinets: number;
  cfh_options: number;
  radio_edges: number;
  messaging_accounts: number;
  api_tokens: number;
  /** Version 2 sections are counted when the file has them. */
  webhooks?: number;
  cfh_outcomes?: number;
  call_buttons?: number;
  cfh_displays?: number;
}

/** An IANA time zone name as Intl knows it (not an offset like +05:00, which has no rules). */
function isTimeZone(name: string): boolean {
  if (!name.includes('/') && name !== 'UTC') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Runs one entry's statements, naming the entry if the database refuses them. */
export async function entry(where: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ProvisioningError) throw err;
    throw new ProvisioningError(explainRefusal(where, err as { code?: string; detail?: string; message?: string }));
  }
}

export async function organizationOfLocation(q: Queryable, where: string, locationId: number): Promise<number> {
  const [row] = await q.query<{ organization_id: number }>('SELECT organization_id FROM locations WHERE id = $1', [locationId]);
  if (row === undefined) throw new ProvisioningError(`${where}.location_id: location ${locationId} does not exist (it is neither in this file nor already provisioned)`);
  return row.organization_id;
}

/** What an edge device announces of its location's CFH requests when the file does not say (contract section 12). */
const DEFAULT_ANNOUNCE_CFH = ['created', 'escalated', 'cancelled'];

export async function applyProvisioning(db: Db, clock: Clock, input: unknown): Promise<ProvisioningSummary> {
  const file = parseProvisioning(input);
  const now = clock.now();
  return db.tx(async (q) => {
    const summary: ProvisioningSummary = { organizations: 0, locations: 0, lockers: 0, cabinets: 0, cfh_options: 0, radio_edges: 0, messaging_accounts: 0, api_tokens: 0 };
    if (file.webhooks !== undefined) summary.webhooks = 0;
    for (const [i, o] of (file.organizations ?? []).entries()) {
      await entry(`organizations[${i}]`, async () => {
        await q.query(
          `WITH ins AS (INSERT INTO organizations (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) ON CONFLICT (id) DO NOTHING)
           UPDATE organizations SET name = $2, updated_at = $3
           WHERE id = $1 AND name IS DISTINCT FROM $2`,
          [o.id, o.name, now],
        );
      });
      summary.organizations++;
    }
    for (const [i, l] of (file.locations ?? []).entries()) {
      await entry(`locations[${i}]`, async () => {
        const timeZone = l.time_zone ?? null;
        if (timeZone !== null && !isTimeZone(timeZone)) throw new ProvisioningError(`locations[${i}].time_zone: "${timeZone}" is not an IANA time zone`);
        await q.query(
          `WITH ins AS (
             INSERT INTO locations (id, organization_id, name, cfh_timeout_seconds, store_number, locker_pickup_hours, locker_reminder_hours, time_zone, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $6, $7, $8, $9, $5, $5)
             ON CONFLICT (id) DO NOTHING
           )
           UPDATE locations SET organization_id = $2, name = $3, cfh_timeout_seconds = $4, store_number = $6,
             locker_pickup_hours = $7, locker_reminder_hours = $8, time_zone = $9, updated_at = $5
           WHERE id = $1 AND (organization_id, name, cfh_timeout_seconds, store_number, locker_pickup_hours, locker_reminder_hours, time_zone)
             IS DISTINCT FROM ($2, $3, $4, $6, $7::numeric, $8::numeric, $9::text)`,
          [l.id, l.organization_id, l.name, l.cfh_timeout_seconds ?? null, now, l.store_number ?? null, l.locker_pickup_hours ?? null, l.locker_reminder_hours ?? null, timeZone],
        );
        await applyCfhLocationSettings(q, l, now);
        // The database computes the day boundaries: it must know the zone too (its tz data may be older).
        if (timeZone !== null) await q.query('SELECT now() AT TIME ZONE $1', [timeZone]);
      });
      summary.locations++;
    }
    for (const [i, k] of (file.lockers ?? []).entries()) {
      const where = `lockers[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, k.location_id);
        await q.query(
          `WITH ins AS (
             INSERT INTO lockers (id, organization_id, location_id, name, version, rear_loading_available, timer, api_key, api_key_hash, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
             ON CONFLICT (id) DO NOTHING
           )
           UPDATE lockers SET organization_id = $2, location_id = $3, name = $4, version = $5, rear_loading_available = $6,
             timer = $7, api_key = $8, api_key_hash = $9, updated_at = $10
           WHERE id = $1 AND (organization_id, location_id, name, version, rear_loading_available, timer, api_key_hash)
             IS DISTINCT FROM ($2, $3, $4, $5, $6, $7, $9)`,
          [k.id, organizationId, k.location_id, k.name, k.version ?? 2, k.rear_loading_available ?? false, k.timer ?? 30, k.api_key, sha256hex(k.api_key), now],
        );
      });
      summary.lockers++;
      for (const [j, c] of (k.cabinets ?? []).entries()) {
        // size, thermal_mode and enabled are where a cabinet starts: L3 owns them afterwards, so
        // applying the file again does not undo a resize or a disable.
        await entry(`${where}.cabinets[${j}]`, async () => {
          await q.query(
            `WITH ins AS (
               INSERT INTO cabinets (id, locker_id, key, name, size, thermal_mode, tag, enabled, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
               ON CONFLICT (id) DO NOTHING
             )
             UPDATE cabinets SET locker_id = $2, key = $3, name = $4, tag = $7, updated_at = $9
             WHERE id = $1 AND (locker_id, key, name, tag) IS DISTINCT FROM ($2, $3, $4, $7)`,
            [c.id, k.id, c.key, c.name ?? null, c.size ?? 'medium', c.thermal_mode ?? 'ambient', c.tag ?? null, c.enabled ?? true, now],
          );
        });
        summary.cabinets++;
      }
    }
    for (const [i, o] of (file.cfh_options ?? []).entries()) {
      await entry(`cfh_options[${i}]`, async () => {
        await q.query(
          `WITH ins AS (
             INSERT INTO cfh_options (id, organization_id, location_id, text_en, text_fr, prompt_en, prompt_fr, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
             ON CONFLICT (id) DO NOTHING
           )
           UPDATE cfh_options SET organization_id = $2, location_id = $3, text_en = $4, text_fr = $5, prompt_en = $6, prompt_fr = $7, updated_at = $8
           WHERE id = $1 AND (organization_id, location_id, text_en, text_fr, prompt_en, prompt_fr) IS DISTINCT FROM ($2, $3, $4, $5, $6, $7)`,
          [o.id, o.organization_id, o.location_id ?? null, o.text_en, o.text_fr, o.prompt_en, o.prompt_fr, now],
        );
        await q.query('UPDATE cfh_options SET staff_action = $2, updated_at = $3 WHERE id = $1 AND staff_action IS DISTINCT FROM $2',
          [o.id, o.staff_action ?? 'claim_and_on_the_way', now]);
      });
      summary.cfh_options++;
    }
    await applyCfhDevices(q, file, summary, now);
    for (const [i, e] of (file.radio_edges ?? []).entries()) {
      const where = `radio_edges[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, e.location_id);
        await q.query(
          `WITH ins AS (
             INSERT INTO radio_edges (edge_id, organization_id, location_id, name, device_key_hash, voice_handlers, created_at, updated_at, announce_cfh, voice_actions)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9)
             ON CONFLICT (edge_id) DO NOTHING
           )
           UPDATE radio_edges SET organization_id = $2, location_id = $3, name = $4, device_key_hash = $5, voice_handlers = $6, updated_at = $7,
             announce_cfh = $8, voice_actions = $9
           WHERE edge_id = $1 AND (organization_id, location_id, name, device_key_hash, voice_handlers, announce_cfh, voice_actions)
             IS DISTINCT FROM ($2, $3, $4, $5, $6::text[], $8::text[], $9::boolean)`,
          [
            e.edge_id, organizationId, e.location_id, e.name, sha256hex(e.device_key), e.voice_handlers ?? [], now,
            e.announce_cfh ?? DEFAULT_ANNOUNCE_CFH, e.voice_actions ?? false,
          ],
        );
      });
      summary.radio_edges++;
    }
    for (const [i, a] of (file.messaging_accounts ?? []).entries()) {
      await entry(`messaging_accounts[${i}]`, async () => {
        await q.query(
          `WITH ins AS (
             INSERT INTO messaging_accounts (account_sid, organization_id, auth_token, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (account_sid) DO NOTHING
           )
           UPDATE messaging_accounts SET organization_id = $2, auth_token = $3, updated_at = $4
           WHERE account_sid = $1 AND (organization_id, auth_token) IS DISTINCT FROM ($2, $3)`,
          [a.account_sid, a.organization_id, a.auth_token, now],
        );
      });
      summary.messaging_accounts++;
    }
    for (const [i, w] of (file.webhooks ?? []).entries()) {
      const where = `webhooks[${i}]`;
      await entry(where, async () => {
        const problem = targetUrlProblem(w.url);
        if (problem !== null) throw new ProvisioningError(`${where}.url: ${problem}`);
        if (w.location_id !== undefined && w.location_id !== null) {
          const organizationId = await organizationOfLocation(q, where, w.location_id);
          if (organizationId !== w.organization_id) {
            throw new ProvisioningError(`${where}.location_id: location ${w.location_id} is not of organization ${w.organization_id}`);
          }
        }
        await q.query(
          `WITH ins AS (
             INSERT INTO webhook_endpoints (id, organization_id, location_id, url, secret, events, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
             ON CONFLICT (id) DO NOTHING
           )
           UPDATE webhook_endpoints SET organization_id = $2, location_id = $3, url = $4, secret = $5, events = $6, updated_at = $7
           WHERE id = $1 AND (organization_id, location_id, url, secret, events) IS DISTINCT FROM ($2, $3, $4, $5, $6::text[])`,
          [w.id, w.organization_id, w.location_id ?? null, w.url, w.secret, w.events ?? EVENT_TYPES, now],
        );
      });
      summary.webhooks = (summary.webhooks ?? 0) + 1;
    }
    for (const [i, t] of (file.api_tokens ?? []).entries()) {
      const where = `api_tokens[${i}]`;
      await entry(where, async () => {
        for (const [j, locationId] of (t.location_ids ?? []).entries()) {
          const organizationId = await organizationOfLocation(q, `${where}.location_ids[${j}]`, locationId);
          if (organizationId !== t.organization_id) {
            throw new ProvisioningError(`${where}.location_ids[${j}]: location ${locationId} is not of organization ${t.organization_id}`);
          }
        }
        await q.query(
          `WITH ins AS (
             INSERT INTO api_tokens (name, organization_id, scopes, token_hash, expires_at, revoked_at, location_ids, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::boolean THEN $7::timestamptz END, $8, $7, $7)
             ON CONFLICT (name) DO NOTHING
           )
           UPDATE api_tokens SET organization_id = $2, scopes = $3, token_hash = $4, expires_at = $5,
             revoked_at = CASE WHEN $6::boolean THEN COALESCE(revoked_at, $7::timestamptz) END, location_ids = $8, updated_at = $7
           WHERE name = $1 AND (organization_id, scopes, token_hash, expires_at, revoked_at IS NOT NULL, location_ids)
             IS DISTINCT FROM ($2, $3::text[], $4, $5::timestamptz, $6::boolean, $8::int[])`,
          [t.name, t.organization_id, t.scopes, sha256hex(t.token), t.expires_at ?? null, t.revoked ?? false, now, t.location_ids ?? null],
        );
      });
      summary.api_tokens++;
    }
    return summary;
  });
}
