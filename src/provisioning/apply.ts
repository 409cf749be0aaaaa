// Applies a provisioning file: validated whole first, then upserted by id in one transaction, so a
// broken file changes nothing and applying the same file twice changes nothing the second time.
// Each entry is inserted if new (ON CONFLICT DO NOTHING) and otherwise updated only where it
// differs, in one statement: an unchanged row is neither written nor locked. (INSERT ... ON
// CONFLICT DO UPDATE locks every row it meets, even those its WHERE leaves alone; an instance
// starting with PROVISION_FILE while others serve orders then held every locker and cabinet of the
// file, and deadlocked with an order that held a cabinet and needed its locker.)
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { makeAjv } from '../http/validation.ts';
import { applyCfhDevices } from './cfh.ts';
import { cabinetColumns, checkCabinetKeys, checkTimeZone, FieldProblem, locationColumns, lockerColumns, optionColumns } from './entries.ts';
import { exists, madeKey, OWNED, tookOver, type ApplyContext } from './owners.ts';
import { ProvisioningFile } from './schema.ts';
import { closedSchema, explainIssues, explainRefusal } from './errors.ts';
import { upsertByKey } from './upsert.ts';
import { EXAMPLE_SECRET_PROBLEM } from '../example-secrets.ts';
import { exampleKeys, weakKeys } from './strength.ts';
import { applyPeople, applyTokens, auditApplied, revokeUnlisted } from './people.ts';
import { applyIntegrations } from './integrations.ts';
import { missingScanCodes, setScanCode, type ScanTarget } from '../cfh/scan-codes.ts';

export class ProvisioningError extends Error {}

// Closed: an unknown key is refused (with the name it most likely meant), not silently dropped.
const validate = makeAjv({ coerceTypes: false, verbose: true }).compile<ProvisioningFile>(closedSchema(ProvisioningFile));

export function parseProvisioning(input: unknown): ProvisioningFile {
  if (validate(input)) {
    const weak = weakKeys(input);
    if (weak.length > 0) throw new ProvisioningError(weak.slice(0, 10).join('; '));
    return input;
  }
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
  /** Tokens an earlier file made that this one no longer lists, revoked by this apply. */
  api_tokens_revoked?: number;
  /** Keys the service made for new lockers and displays the file gave none: shown once. */
  made_keys?: { kind: 'locker' | 'cfh_display'; id: number; key: string }[];
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
  /** The file's fields holding one of the documentation's example secrets (warned about). */
  example_secrets?: string[];
}

export interface ShownScanCode {
  kind: ScanTarget;
  id: number;
  scan_code: string;
}

/** Runs one entry's statements, naming the entry if the database refuses them. */
export async function entry(where: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ProvisioningError) throw err;
    if (err instanceof FieldProblem) throw new ProvisioningError(`${where}.${err.field}: ${err.problem}`);
    throw new ProvisioningError(explainRefusal(where, err as { code?: string; detail?: string; message?: string }));
  }
}

export async function organizationOfLocation(q: Queryable, where: string, locationId: number): Promise<number> {
  const [row] = await q.query<{ organization_id: number }>('SELECT organization_id FROM locations WHERE id = $1', [locationId]);
  if (row === undefined)
    throw new ProvisioningError(`${where}.location_id: location ${locationId} does not exist (it is neither in this file nor already provisioned)`);
  return row.organization_id;
}

export async function applyProvisioning(
  db: Db,
  clock: Clock,
  input: unknown,
  opts: { source?: string; /** NODE_ENV=production: the documentation's example secrets are refused. */ production?: boolean } = {},
): Promise<ProvisioningSummary> {
  const file = parseProvisioning(input);
  const examples = exampleKeys(file);
  if (opts.production === true && examples.length > 0) {
    throw new ProvisioningError(`${examples.slice(0, 10).join(', ')} ${EXAMPLE_SECRET_PROBLEM} (refused with NODE_ENV=production)`);
  }
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
    const ctx: ApplyContext = { q, now, source: opts.source ?? null, madeKeys: [] };
    for (const [i, l] of (file.locations ?? []).entries()) {
      await entry(`locations[${i}]`, async () => {
        await checkTimeZone(q, l.time_zone);
        const done = await upsertByKey(q, 'locations', ['id', l.id], locationColumns(l), now, OWNED);
        await tookOver(ctx, done, { type: 'location', id: l.id, name: l.name, organizationId: l.organization_id, locationId: l.id });
      });
      summary.locations++;
    }
    for (const [i, k] of (file.lockers ?? []).entries()) {
      const where = `lockers[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, k.location_id);
        checkCabinetKeys(k.cabinets ?? []);
        const apiKey = k.api_key ?? ((await exists(q, 'lockers', k.id)) ? null : madeKey(ctx, 'locker', k.id));
        const done = await upsertByKey(q, 'lockers', ['id', k.id], lockerColumns(k, organizationId, apiKey), now, { versionColumn: 'object_version' });
        await tookOver(ctx, done, { type: 'locker', id: k.id, name: k.name, organizationId, locationId: k.location_id });
      });
      summary.lockers++;
      for (const [j, c] of (k.cabinets ?? []).entries()) {
        await entry(`${where}.cabinets[${j}]`, async () => {
          await upsertByKey(q, 'cabinets', ['id', c.id], cabinetColumns(c, k.id, 'file'), now);
        });
        summary.cabinets++;
      }
    }
    for (const [i, o] of (file.cfh_options ?? []).entries()) {
      await entry(`cfh_options[${i}]`, async () => {
        const done = await upsertByKey(q, 'cfh_options', ['id', o.id], optionColumns(o), now, OWNED);
        await tookOver(ctx, done, { type: 'cfh_option', id: o.id, name: o.text_en, organizationId: o.organization_id, locationId: o.location_id ?? null });
      });
      summary.cfh_options++;
    }
    await applyCfhDevices(ctx, file, summary);
    await applyIntegrations(q, file, summary, opts.source ?? null, now);
    await applyTokens(q, file.api_tokens ?? [], now, summary);
    await revokeUnlisted(q, file, now, summary);
    // A token the file revoked, changed or no longer lists is forgotten by every instance's memory of live tokens.
    if ((file.api_tokens ?? []).length > 0 || summary.api_tokens_revoked !== undefined) q.signal('credentials');
    await applyPeople(q, file, now, summary);
    await auditApplied(q, file, summary, opts.source ?? null, now);
    const codes = await makeMissingScanCodes(q, file, now);
    if (codes.length > 0) summary.scan_codes = codes;
    if (examples.length > 0) summary.example_secrets = examples;
    return ctx.madeKeys.length === 0 ? summary : { ...summary, made_keys: ctx.madeKeys };
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
