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
import { applyCfhDevices } from './cfh.ts';
import { cabinetColumns, checkCabinetKeys, checkTimeZone, FieldProblem, locationColumns, lockerColumns, optionColumns } from './entries.ts';
import { exists, madeKey, OWNED, tookOver, type ApplyContext } from './owners.ts';
import { ProvisioningFile } from './schema.ts';
import { closedSchema, explainIssues, explainRefusal } from './errors.ts';
import { upsertByKey } from './upsert.ts';
import { applyPeople, applyTokens, auditApplied } from './people.ts';

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
  /** Keys the service made for new lockers and displays the file gave none: shown once. */
  made_keys?: { kind: 'locker' | 'cfh_display'; id: number; key: string }[];
  /** Version 2 sections are counted when the file has them. */
  webhooks?: number;
  cfh_outcomes?: number;
  call_buttons?: number;
  cfh_displays?: number;
  people?: number;
  sso_role_mappings?: number;
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
    return ctx.madeKeys.length === 0 ? summary : { ...summary, made_keys: ctx.madeKeys };
  });
}
