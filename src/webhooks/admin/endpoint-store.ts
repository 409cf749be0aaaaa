// Webhook endpoints' SQL for section 18 and the provisioning file (this table's one writer). An
// endpoint is of its organization (location_id null) or of one location; a limited administrator
// sees those of its locations. The secret is read only to sign (webhooks/store.ts), never here.
import type { Queryable } from '../../db/db.ts';
import { sql, type Sql } from '../../db/sql.ts';
import type { AdminScope } from '../../admin/rules.ts';
import type { EventType } from '../../events/log.ts';
import type { WebhookFormat } from '../../provisioning/schema.ts';

export interface EndpointRow {
  id: number;
  organization_id: number;
  location_id: number | null;
  url: string;
  format: WebhookFormat;
  events: EventType[];
  enabled: boolean;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
}

/** What an endpoint is set to (the file's entry, or administration's body made whole). */
export interface EndpointFields {
  organizationId: number;
  locationId: number | null;
  url: string;
  format: WebhookFormat;
  events: readonly string[];
  enabled: boolean;
}

const COLUMNS = sql`w.id, w.organization_id, w.location_id, w.url, w.format, w.events, w.enabled, w.version, w.managed_by, w.created_at, w.updated_at`;

function seen(scope: AdminScope): Sql {
  const limits = scope.locationIds === null ? null : [...scope.locationIds];
  return sql`w.organization_id = ${scope.organizationId} AND (${limits}::int[] IS NULL OR w.location_id = ANY (${limits}::int[]))`;
}

export async function listVisibleEndpoints(q: Queryable, scope: AdminScope): Promise<EndpointRow[]> {
  return q.run<EndpointRow>(sql`SELECT ${COLUMNS} FROM webhook_endpoints w WHERE ${seen(scope)} ORDER BY w.id`);
}

/** An endpoint of the organization, whatever its location (the use case decides 404 or 403); `lock` for a change. */
export async function endpointOfOrganization(q: Queryable, organizationId: number, id: number, lock = false): Promise<EndpointRow | undefined> {
  const [row] = await q.run<EndpointRow>(
    sql`SELECT ${COLUMNS} FROM webhook_endpoints w WHERE w.id = ${id} AND w.organization_id = ${organizationId} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return row;
}

/** The endpoint with its secret, to send a test (the secret signs it and goes no further). */
export async function endpointSecret(q: Queryable, id: number): Promise<string | undefined> {
  const [row] = await q.run<{ secret: string }>(sql`SELECT secret FROM webhook_endpoints WHERE id = ${id}`);
  return row?.secret;
}

/** A new endpoint of administration; undefined when `id` is taken. */
export async function insertEndpoint(q: Queryable, id: number | null, f: EndpointFields, secret: string, now: Date): Promise<EndpointRow | undefined> {
  const [row] = await q.run<EndpointRow>(sql`
    INSERT INTO webhook_endpoints AS w (id, organization_id, location_id, url, format, secret, events, enabled, managed_by, created_at, updated_at)
    VALUES (coalesce(${id}::int, nextval('webhook_endpoints_id_seq')::int), ${f.organizationId}, ${f.locationId}::int, ${f.url}, ${f.format},
      ${secret}, ${[...f.events]}::text[], ${f.enabled}, 'admin', ${now}, ${now})
    ON CONFLICT (id) DO NOTHING
    RETURNING ${COLUMNS}`);
  return row;
}

/** The endpoint set to `f` (and `secret`, when given), its version moved on. */
export async function updateEndpoint(q: Queryable, id: number, f: EndpointFields, secret: string | undefined, now: Date): Promise<EndpointRow> {
  const [row] = await q.run<EndpointRow>(sql`
    UPDATE webhook_endpoints w SET location_id = ${f.locationId}::int, url = ${f.url}, format = ${f.format}, events = ${[...f.events]}::text[],
      enabled = ${f.enabled}, secret = coalesce(${secret ?? null}::text, w.secret), version = w.version + 1, updated_at = ${now}
    WHERE w.id = ${id}
    RETURNING ${COLUMNS}`);
  return row as EndpointRow;
}

/** Whether anything was ever delivered to it (its deliveries are its history). */
export async function endpointHasHistory(q: Queryable, id: number): Promise<boolean> {
  return (await q.run(sql`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${id} LIMIT 1`)).length > 0;
}

export async function deleteEndpoint(q: Queryable, id: number): Promise<void> {
  await q.run(sql`DELETE FROM webhook_endpoints WHERE id = ${id}`);
}

/**
 * The file's entry: inserted, or updated where it differs (its version moved on), made the file's.
 * Returns the row as it was before (undefined: new), so the caller can tell a takeover. A new
 * endpoint without a secret given (a chat endpoint) gets `secret.ifNew`.
 */
export async function upsertFileEndpoint(
  q: Queryable,
  id: number,
  f: EndpointFields,
  secret: { given: string | undefined; ifNew: string },
  now: Date,
): Promise<{ before: EndpointRow | undefined }> {
  const [before] = await q.run<EndpointRow>(sql`SELECT ${COLUMNS} FROM webhook_endpoints w WHERE w.id = ${id} FOR UPDATE`);
  const events = [...f.events];
  if (before === undefined) {
    await q.run(sql`
      INSERT INTO webhook_endpoints (id, organization_id, location_id, url, format, secret, events, enabled, managed_by, created_at, updated_at)
      VALUES (${id}, ${f.organizationId}, ${f.locationId}::int, ${f.url}, ${f.format}, ${secret.given ?? secret.ifNew}, ${events}::text[], ${f.enabled}, 'file',
        ${now}, ${now})`);
    // Administration's ids come after the file's.
    await q.run(sql`SELECT setval('webhook_endpoints_id_seq', greatest(${id}::bigint, (SELECT last_value FROM webhook_endpoints_id_seq)))`);
    return { before };
  }
  // A chat endpoint's secret is the service's own: applying the file again keeps it.
  const storedSecret = secret.given ?? null;
  await q.run(sql`
    UPDATE webhook_endpoints w SET organization_id = ${f.organizationId}, location_id = ${f.locationId}::int, url = ${f.url}, format = ${f.format},
      secret = coalesce(${storedSecret}::text, w.secret), events = ${events}::text[], enabled = ${f.enabled}, managed_by = 'file',
      version = w.version + 1, updated_at = ${now}
    WHERE w.id = ${id} AND (w.organization_id, w.location_id, w.url, w.format, w.secret, w.events, w.enabled, w.managed_by)
      IS DISTINCT FROM (${f.organizationId}::int, ${f.locationId}::int, ${f.url}::text, ${f.format}::text, coalesce(${storedSecret}::text, w.secret),
        ${events}::text[], ${f.enabled}::boolean, 'file')`);
  return { before };
}

/** The language of an endpoint's location (a test card is in it); null: the organization's endpoint, or none set. */
export async function locationLanguage(q: Queryable, locationId: number | null): Promise<string | null> {
  if (locationId === null) return null;
  const [row] = await q.run<{ language: string | null }>(sql`SELECT language FROM locations WHERE id = ${locationId}`);
  return row?.language ?? null;
}
