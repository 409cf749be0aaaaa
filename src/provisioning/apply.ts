// Applies a provisioning file: validated whole first, then upserted by id in one transaction, so a
// broken file changes nothing and applying the same file twice changes nothing the second time.
// Each entry is inserted if new (ON CONFLICT DO NOTHING) and otherwise updated only where it
// differs, in one statement: an unchanged row is neither written nor locked. (INSERT ... ON
// CONFLICT DO UPDATE locks every row it meets, even those its WHERE leaves alone; an instance
// starting with PROVISION_FILE while others serve orders then held every locker and cabinet of the
// file, and deadlocked with an order that held a cabinet and needed its locker.)
import { DEFAULT_STAFF_ACTION } from '../cfh/schemas.ts';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { EVENT_TYPES } from '../events/log.ts';
import { makeAjv } from '../http/validation.ts';
import { sha256hex } from '../http/secrets.ts';
import { targetUrlProblem } from '../webhooks/rules.ts';
import { applyCfhDevices, applyCfhLocationSettings } from './cfh.ts';
import { ProvisioningFile } from './schema.ts';
import { closedSchema, explainIssues, explainRefusal } from './errors.ts';
import { upsertByKey } from './upsert.ts';
import { applyPeople, applyTokens, auditApplied } from './people.ts';
import { missingScanCodes, setScanCode, type ScanTarget } from '../cfh/scan-codes.ts';

export class ProvisioningError extends Error {}

// Closed: an unknown key is refused (with the name it most likely meant), not silently dropped.
const validate = makeAjv({ coerceTypes: false, verbose: true }).compile<ProvisioningFile>(closedSchema(ProvisioningFile));

export function parseProvisioning(input: unknown): ProvisioningFile {
  if (validate(input)) return input;
  throw new ProvisioningError(
    explainIssues(validate.errors ?? [])
      .slice(0, 10)
      .join('; '),
  );
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
  people?: number;
  sso_role_mappings?: number;
  /** Scan codes made for objects with require_scan that had none (section 19): shown once, by the
   * command's output, never kept in the audit log. */
  scan_codes?: ShownScanCode[];
}

export interface ShownScanCode {
  kind: ScanTarget;
  id: number;
  scan_code: string;
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
  if (row === undefined)
    throw new ProvisioningError(`${where}.location_id: location ${locationId} does not exist (it is neither in this file nor already provisioned)`);
  return row.organization_id;
}

/** What an edge device announces of its location's CFH requests when the file does not say (contract section 12). */
const DEFAULT_ANNOUNCE_CFH = ['created', 'escalated', 'cancelled'];

export async function applyProvisioning(db: Db, clock: Clock, input: unknown, opts: { source?: string } = {}): Promise<ProvisioningSummary> {
  const file = parseProvisioning(input);
  const now = clock.now();
  return db.tx(async (q) => {
    const summary: ProvisioningSummary = {
      organizations: 0,
      locations: 0,
      lockers: 0,
      cabinets: 0,
      cfh_options: 0,
      radio_edges: 0,
      messaging_accounts: 0,
      api_tokens: 0,
    };
    if (file.webhooks !== undefined) summary.webhooks = 0;
    for (const [i, o] of (file.organizations ?? []).entries()) {
      await entry(`organizations[${i}]`, async () => {
        await upsertByKey(q, 'organizations', ['id', o.id], { name: { value: o.name } }, now);
      });
      summary.organizations++;
    }
    for (const [i, l] of (file.locations ?? []).entries()) {
      await entry(`locations[${i}]`, async () => {
        const timeZone = l.time_zone ?? null;
        if (timeZone !== null && !isTimeZone(timeZone)) throw new ProvisioningError(`locations[${i}].time_zone: "${timeZone}" is not an IANA time zone`);
        await upsertByKey(
          q,
          'locations',
          ['id', l.id],
          {
            organization_id: { value: l.organization_id },
            name: { value: l.name },
            cfh_timeout_seconds: { value: l.cfh_timeout_seconds ?? null },
            store_number: { value: l.store_number ?? null },
            locker_pickup_hours: { value: l.locker_pickup_hours ?? null, cast: 'numeric' },
            locker_reminder_hours: { value: l.locker_reminder_hours ?? null, cast: 'numeric' },
            time_zone: { value: timeZone, cast: 'text' },
          },
          now,
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
        await upsertByKey(
          q,
          'lockers',
          ['id', k.id],
          {
            organization_id: { value: organizationId },
            location_id: { value: k.location_id },
            name: { value: k.name },
            version: { value: k.version ?? 2 },
            rear_loading_available: { value: k.rear_loading_available ?? false },
            timer: { value: k.timer ?? 30 },
            api_key: { value: k.api_key, uncompared: true },
            api_key_hash: { value: sha256hex(k.api_key) },
          },
          now,
        );
      });
      summary.lockers++;
      for (const [j, c] of (k.cabinets ?? []).entries()) {
        // size, thermal_mode and enabled are where a cabinet starts: L3 owns them afterwards, so
        // applying the file again does not undo a resize or a disable.
        await entry(`${where}.cabinets[${j}]`, async () => {
          await upsertByKey(
            q,
            'cabinets',
            ['id', c.id],
            {
              locker_id: { value: k.id },
              key: { value: c.key },
              name: { value: c.name ?? null },
              size: { value: c.size ?? 'medium', insertOnly: true },
              thermal_mode: { value: c.thermal_mode ?? 'ambient', insertOnly: true },
              tag: { value: c.tag ?? null },
              enabled: { value: c.enabled ?? true, insertOnly: true },
            },
            now,
          );
        });
        summary.cabinets++;
      }
    }
    for (const [i, o] of (file.cfh_options ?? []).entries()) {
      await entry(`cfh_options[${i}]`, async () => {
        await upsertByKey(
          q,
          'cfh_options',
          ['id', o.id],
          {
            organization_id: { value: o.organization_id },
            location_id: { value: o.location_id ?? null },
            text_en: { value: o.text_en },
            text_fr: { value: o.text_fr },
            prompt_en: { value: o.prompt_en },
            prompt_fr: { value: o.prompt_fr },
            staff_action: { value: o.staff_action ?? DEFAULT_STAFF_ACTION },
            require_scan: { value: o.require_scan ?? false },
          },
          now,
        );
      });
      summary.cfh_options++;
    }
    await applyCfhDevices(q, file, summary, now);
    for (const [i, e] of (file.radio_edges ?? []).entries()) {
      const where = `radio_edges[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, e.location_id);
        await upsertByKey(
          q,
          'radio_edges',
          ['edge_id', e.edge_id],
          {
            organization_id: { value: organizationId },
            location_id: { value: e.location_id },
            name: { value: e.name },
            device_key_hash: { value: sha256hex(e.device_key) },
            voice_handlers: { value: e.voice_handlers ?? [], cast: 'text[]' },
            announce_cfh: { value: e.announce_cfh ?? DEFAULT_ANNOUNCE_CFH, cast: 'text[]' },
            voice_actions: { value: e.voice_actions ?? false, cast: 'boolean' },
          },
          now,
        );
      });
      summary.radio_edges++;
    }
    for (const [i, a] of (file.messaging_accounts ?? []).entries()) {
      await entry(`messaging_accounts[${i}]`, async () => {
        await upsertByKey(
          q,
          'messaging_accounts',
          ['account_sid', a.account_sid],
          {
            organization_id: { value: a.organization_id },
            auth_token: { value: a.auth_token },
          },
          now,
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
        await upsertByKey(
          q,
          'webhook_endpoints',
          ['id', w.id],
          {
            organization_id: { value: w.organization_id },
            location_id: { value: w.location_id ?? null },
            url: { value: w.url },
            secret: { value: w.secret },
            events: { value: w.events ?? EVENT_TYPES, cast: 'text[]' },
          },
          now,
        );
      });
      summary.webhooks = (summary.webhooks ?? 0) + 1;
    }
    await applyTokens(q, file.api_tokens ?? [], now, summary);
    // A token the file revoked or changed is forgotten by every instance's memory of live tokens.
    if ((file.api_tokens ?? []).length > 0) q.signal('credentials');
    await applyPeople(q, file, now, summary);
    await auditApplied(q, file, summary, opts.source ?? null, now);
    const codes = await makeMissingScanCodes(q, file, now);
    if (codes.length > 0) summary.scan_codes = codes;
    return summary;
  });
}

/** A scan code for each object of the file that has require_scan and none yet (section 19). */
async function makeMissingScanCodes(q: Queryable, file: ProvisioningFile, now: Date): Promise<ShownScanCode[]> {
  const named = [
    ...(file.cfh_options ?? []).filter((o) => o.require_scan === true).map((o) => ({ target: 'cfh_option' as const, id: o.id })),
    ...(file.call_buttons ?? []).filter((b) => b.require_scan === true).map((b) => ({ target: 'call_button' as const, id: b.id })),
    ...(file.cfh_displays ?? []).filter((d) => d.require_scan === true).map((d) => ({ target: 'display' as const, id: d.id })),
  ];
  const shown: ShownScanCode[] = [];
  for (const { target, id } of await missingScanCodes(q, named)) {
    const code = await setScanCode(q, target, id, now);
    if (code !== null) shown.push({ kind: target, id, scan_code: code });
  }
  return shown;
}
