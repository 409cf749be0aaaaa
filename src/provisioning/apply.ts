// Applies a provisioning file: validated whole first, then upserted by id in one transaction, so a
// broken file changes nothing and applying the same file twice changes nothing the second time.
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { describeIssue, fieldOf } from '../http/errors.ts';
import { makeAjv } from '../http/validation.ts';
import { sha256hex } from '../http/secrets.ts';
import { ProvisioningFile } from './schema.ts';

export class ProvisioningError extends Error {}

const validate = makeAjv({ coerceTypes: false }).compile<ProvisioningFile>(ProvisioningFile);

export function parseProvisioning(input: unknown): ProvisioningFile {
  if (validate(input)) return input;
  const issues = (validate.errors ?? []).filter((i) => i.keyword !== 'anyOf').slice(0, 10);
  throw new ProvisioningError(issues.map((i) => `${fieldOf(i)}: ${describeIssue(i)}`).join('; '));
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
}

/** Runs one entry's statements, naming the entry if the database refuses them. */
async function entry(where: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ProvisioningError) throw err;
    const e = err as { detail?: string; message?: string };
    throw new ProvisioningError(`${where}: ${e.detail ?? e.message ?? String(err)}`);
  }
}

async function organizationOfLocation(q: Queryable, where: string, locationId: number): Promise<number> {
  const [row] = await q.query<{ organization_id: number }>('SELECT organization_id FROM locations WHERE id = $1', [locationId]);
  if (row === undefined) throw new ProvisioningError(`${where}.location_id: location ${locationId} does not exist`);
  return row.organization_id;
}

export async function applyProvisioning(db: Db, clock: Clock, input: unknown): Promise<ProvisioningSummary> {
  const file = parseProvisioning(input);
  const now = clock.now();
  return db.tx(async (q) => {
    const summary: ProvisioningSummary = { organizations: 0, locations: 0, lockers: 0, cabinets: 0, cfh_options: 0, radio_edges: 0, messaging_accounts: 0, api_tokens: 0 };
    for (const [i, o] of (file.organizations ?? []).entries()) {
      await entry(`organizations[${i}]`, async () => {
        await q.query(
          `INSERT INTO organizations (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3)
           ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at
           WHERE organizations.name IS DISTINCT FROM EXCLUDED.name`,
          [o.id, o.name, now],
        );
      });
      summary.organizations++;
    }
    for (const [i, l] of (file.locations ?? []).entries()) {
      await entry(`locations[${i}]`, async () => {
        await q.query(
          `INSERT INTO locations (id, organization_id, name, cfh_timeout_seconds, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
           ON CONFLICT (id) DO UPDATE SET organization_id = EXCLUDED.organization_id, name = EXCLUDED.name,
             cfh_timeout_seconds = EXCLUDED.cfh_timeout_seconds, updated_at = EXCLUDED.updated_at
           WHERE (locations.organization_id, locations.name, locations.cfh_timeout_seconds)
             IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.name, EXCLUDED.cfh_timeout_seconds)`,
          [l.id, l.organization_id, l.name, l.cfh_timeout_seconds ?? null, now],
        );
      });
      summary.locations++;
    }
    for (const [i, k] of (file.lockers ?? []).entries()) {
      const where = `lockers[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, k.location_id);
        await q.query(
          `INSERT INTO lockers (id, organization_id, location_id, name, version, rear_loading_available, timer, api_key, api_key_hash, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
           ON CONFLICT (id) DO UPDATE SET organization_id = EXCLUDED.organization_id, location_id = EXCLUDED.location_id,
             name = EXCLUDED.name, version = EXCLUDED.version, rear_loading_available = EXCLUDED.rear_loading_available,
             timer = EXCLUDED.timer, api_key = EXCLUDED.api_key, api_key_hash = EXCLUDED.api_key_hash, updated_at = EXCLUDED.updated_at
           WHERE (lockers.organization_id, lockers.location_id, lockers.name, lockers.version, lockers.rear_loading_available, lockers.timer, lockers.api_key_hash)
             IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.location_id, EXCLUDED.name, EXCLUDED.version, EXCLUDED.rear_loading_available, EXCLUDED.timer, EXCLUDED.api_key_hash)`,
          [k.id, organizationId, k.location_id, k.name, k.version ?? 2, k.rear_loading_available ?? false, k.timer ?? 30, k.api_key, sha256hex(k.api_key), now],
        );
      });
      summary.lockers++;
      for (const [j, c] of (k.cabinets ?? []).entries()) {
        // size, thermal_mode and enabled are where a cabinet starts: L3 owns them afterwards, so
        // applying the file again does not undo a resize or a disable.
        await entry(`${where}.cabinets[${j}]`, async () => {
          await q.query(
            `INSERT INTO cabinets (id, locker_id, key, name, size, thermal_mode, tag, enabled, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
             ON CONFLICT (id) DO UPDATE SET locker_id = EXCLUDED.locker_id, key = EXCLUDED.key, name = EXCLUDED.name,
               tag = EXCLUDED.tag, updated_at = EXCLUDED.updated_at
             WHERE (cabinets.locker_id, cabinets.key, cabinets.name, cabinets.tag)
               IS DISTINCT FROM (EXCLUDED.locker_id, EXCLUDED.key, EXCLUDED.name, EXCLUDED.tag)`,
            [c.id, k.id, c.key, c.name ?? null, c.size ?? 'medium', c.thermal_mode ?? 'ambient', c.tag ?? null, c.enabled ?? true, now],
          );
        });
        summary.cabinets++;
      }
    }
    for (const [i, o] of (file.cfh_options ?? []).entries()) {
      await entry(`cfh_options[${i}]`, async () => {
        await q.query(
          `INSERT INTO cfh_options (id, organization_id, location_id, text_en, text_fr, prompt_en, prompt_fr, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
           ON CONFLICT (id) DO UPDATE SET organization_id = EXCLUDED.organization_id, location_id = EXCLUDED.location_id,
             text_en = EXCLUDED.text_en, text_fr = EXCLUDED.text_fr, prompt_en = EXCLUDED.prompt_en, prompt_fr = EXCLUDED.prompt_fr,
             updated_at = EXCLUDED.updated_at
           WHERE (cfh_options.organization_id, cfh_options.location_id, cfh_options.text_en, cfh_options.text_fr, cfh_options.prompt_en, cfh_options.prompt_fr)
             IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.location_id, EXCLUDED.text_en, EXCLUDED.text_fr, EXCLUDED.prompt_en, EXCLUDED.prompt_fr)`,
          [o.id, o.organization_id, o.location_id ?? null, o.text_en, o.text_fr, o.prompt_en, o.prompt_fr, now],
        );
      });
      summary.cfh_options++;
    }
    for (const [i, e] of (file.radio_edges ?? []).entries()) {
      const where = `radio_edges[${i}]`;
      await entry(where, async () => {
        const organizationId = await organizationOfLocation(q, where, e.location_id);
        await q.query(
          `INSERT INTO radio_edges (edge_id, organization_id, location_id, name, device_key_hash, voice_handlers, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
           ON CONFLICT (edge_id) DO UPDATE SET organization_id = EXCLUDED.organization_id, location_id = EXCLUDED.location_id,
             name = EXCLUDED.name, device_key_hash = EXCLUDED.device_key_hash, voice_handlers = EXCLUDED.voice_handlers, updated_at = EXCLUDED.updated_at
           WHERE (radio_edges.organization_id, radio_edges.location_id, radio_edges.name, radio_edges.device_key_hash, radio_edges.voice_handlers)
             IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.location_id, EXCLUDED.name, EXCLUDED.device_key_hash, EXCLUDED.voice_handlers)`,
          [e.edge_id, organizationId, e.location_id, e.name, sha256hex(e.device_key), e.voice_handlers ?? [], now],
        );
      });
      summary.radio_edges++;
    }
    for (const [i, a] of (file.messaging_accounts ?? []).entries()) {
      await entry(`messaging_accounts[${i}]`, async () => {
        await q.query(
          `INSERT INTO messaging_accounts (account_sid, organization_id, auth_token, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (account_sid) DO UPDATE SET organization_id = EXCLUDED.organization_id, auth_token = EXCLUDED.auth_token, updated_at = EXCLUDED.updated_at
           WHERE (messaging_accounts.organization_id, messaging_accounts.auth_token) IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.auth_token)`,
          [a.account_sid, a.organization_id, a.auth_token, now],
        );
      });
      summary.messaging_accounts++;
    }
    for (const [i, t] of (file.api_tokens ?? []).entries()) {
      await entry(`api_tokens[${i}]`, async () => {
        await q.query(
          `INSERT INTO api_tokens (name, organization_id, scopes, token_hash, expires_at, revoked_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::boolean THEN $7::timestamptz END, $7, $7)
           ON CONFLICT (name) DO UPDATE SET organization_id = EXCLUDED.organization_id, scopes = EXCLUDED.scopes,
             token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at,
             revoked_at = CASE WHEN $6::boolean THEN COALESCE(api_tokens.revoked_at, EXCLUDED.revoked_at) END,
             updated_at = EXCLUDED.updated_at
           WHERE (api_tokens.organization_id, api_tokens.scopes, api_tokens.token_hash, api_tokens.expires_at, api_tokens.revoked_at IS NOT NULL)
             IS DISTINCT FROM (EXCLUDED.organization_id, EXCLUDED.scopes, EXCLUDED.token_hash, EXCLUDED.expires_at, $6::boolean)`,
          [t.name, t.organization_id, t.scopes, sha256hex(t.token), t.expires_at ?? null, t.revoked ?? false, now],
        );
      });
      summary.api_tokens++;
    }
    return summary;
  });
}
