// Radio edge devices' and messaging accounts' SQL for section 18 and the provisioning file (these
// tables' one writer). An edge device is of one location; a messaging account of the organization.
// Keys are stored as SHA-256 digests, auth tokens as given (the HMAC key of the provider's
// signatures): neither is ever read here.
import type { Queryable } from '../../db/db.ts';
import { sql, type Sql } from '../../db/sql.ts';
import type { AdminScope } from '../../admin/rules.ts';

export interface EdgeRow {
  edge_id: string;
  organization_id: number;
  location_id: number;
  name: string;
  voice_handlers: string[];
  announce_cfh: string[];
  voice_actions: boolean;
  enabled: boolean;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
}

export interface EdgeFields {
  organizationId: number;
  locationId: number;
  name: string;
  voiceHandlers: readonly string[];
  announceCfh: readonly string[];
  voiceActions: boolean;
  enabled: boolean;
}

const EDGE_COLUMNS = sql`e.edge_id, e.organization_id, e.location_id, e.name, e.voice_handlers, e.announce_cfh, e.voice_actions, e.enabled,
  e.version, e.managed_by, e.created_at, e.updated_at`;

function edgeSeen(scope: AdminScope): Sql {
  const limits = scope.locationIds === null ? null : [...scope.locationIds];
  return sql`e.organization_id = ${scope.organizationId} AND (${limits}::int[] IS NULL OR e.location_id = ANY (${limits}::int[]))`;
}

export async function listVisibleEdges(q: Queryable, scope: AdminScope): Promise<EdgeRow[]> {
  return q.run<EdgeRow>(sql`SELECT ${EDGE_COLUMNS} FROM radio_edges e WHERE ${edgeSeen(scope)} ORDER BY e.location_id, e.edge_id`);
}

/** An edge device of the organization, whatever its location (the use case decides 404 or 403). */
export async function edgeOfOrganization(q: Queryable, organizationId: number, edgeId: string, lock = false): Promise<EdgeRow | undefined> {
  const [row] = await q.run<EdgeRow>(
    sql`SELECT ${EDGE_COLUMNS} FROM radio_edges e WHERE e.edge_id = ${edgeId} AND e.organization_id = ${organizationId} ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return row;
}

/** A new edge device of administration; undefined when the id or the key is taken. */
export async function insertEdge(q: Queryable, edgeId: string, f: EdgeFields, keyHash: string, now: Date): Promise<EdgeRow | undefined> {
  const [row] = await q.run<EdgeRow>(sql`
    INSERT INTO radio_edges AS e (edge_id, organization_id, location_id, name, device_key_hash, voice_handlers, announce_cfh, voice_actions, enabled,
      managed_by, created_at, updated_at)
    VALUES (${edgeId}, ${f.organizationId}, ${f.locationId}, ${f.name}, ${keyHash}, ${[...f.voiceHandlers]}::text[], ${[...f.announceCfh]}::text[],
      ${f.voiceActions}, ${f.enabled}, 'admin', ${now}, ${now})
    ON CONFLICT DO NOTHING
    RETURNING ${EDGE_COLUMNS}`);
  return row;
}

/** The edge device set to `f` (and its key's digest, when given), its version moved on. */
export async function updateEdge(q: Queryable, edgeId: string, f: EdgeFields, keyHash: string | null, now: Date): Promise<EdgeRow> {
  const [row] = await q.run<EdgeRow>(sql`
    UPDATE radio_edges e SET location_id = ${f.locationId}, name = ${f.name}, voice_handlers = ${[...f.voiceHandlers]}::text[],
      announce_cfh = ${[...f.announceCfh]}::text[], voice_actions = ${f.voiceActions}, enabled = ${f.enabled},
      device_key_hash = coalesce(${keyHash}::text, e.device_key_hash), version = e.version + 1, updated_at = ${now}
    WHERE e.edge_id = ${edgeId}
    RETURNING ${EDGE_COLUMNS}`);
  return row as EdgeRow;
}

/** Whether the edge device has history: played or heard messages, transcripts. */
export async function edgeHasHistory(q: Queryable, edgeId: string): Promise<boolean> {
  const rows = await q.run(sql`SELECT 1 WHERE EXISTS (SELECT 1 FROM radio_messages WHERE edge_id = ${edgeId})
    OR EXISTS (SELECT 1 FROM radio_heard WHERE edge_id = ${edgeId}) OR EXISTS (SELECT 1 FROM radio_transcripts WHERE edge_id = ${edgeId})`);
  return rows.length > 0;
}

export async function deleteEdge(q: Queryable, edgeId: string): Promise<void> {
  await q.run(sql`DELETE FROM radio_edges WHERE edge_id = ${edgeId}`);
}

/** The file's entry: inserted, or updated where it differs (its version moved on), made the file's. The row before (undefined: new). */
export async function upsertFileEdge(q: Queryable, edgeId: string, f: EdgeFields, keyHash: string, now: Date): Promise<EdgeRow | undefined> {
  const [before] = await q.run<EdgeRow>(sql`SELECT ${EDGE_COLUMNS} FROM radio_edges e WHERE e.edge_id = ${edgeId} FOR UPDATE`);
  const handlers = [...f.voiceHandlers];
  const announce = [...f.announceCfh];
  if (before === undefined) {
    await q.run(sql`
      INSERT INTO radio_edges (edge_id, organization_id, location_id, name, device_key_hash, voice_handlers, announce_cfh, voice_actions, enabled,
        managed_by, created_at, updated_at)
      VALUES (${edgeId}, ${f.organizationId}, ${f.locationId}, ${f.name}, ${keyHash}, ${handlers}::text[], ${announce}::text[], ${f.voiceActions},
        ${f.enabled}, 'file', ${now}, ${now})`);
    return undefined;
  }
  await q.run(sql`
    UPDATE radio_edges e SET organization_id = ${f.organizationId}, location_id = ${f.locationId}, name = ${f.name}, device_key_hash = ${keyHash},
      voice_handlers = ${handlers}::text[], announce_cfh = ${announce}::text[], voice_actions = ${f.voiceActions}, enabled = ${f.enabled},
      managed_by = 'file', version = e.version + 1, updated_at = ${now}
    WHERE e.edge_id = ${edgeId} AND (e.organization_id, e.location_id, e.name, e.device_key_hash, e.voice_handlers, e.announce_cfh, e.voice_actions,
      e.enabled, e.managed_by) IS DISTINCT FROM (${f.organizationId}::int, ${f.locationId}::int, ${f.name}::text, ${keyHash}::text, ${handlers}::text[],
      ${announce}::text[], ${f.voiceActions}::boolean, ${f.enabled}::boolean, 'file')`);
  return before;
}

// --- messaging accounts ---

export interface AccountRow {
  account_sid: string;
  organization_id: number;
  enabled: boolean;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
}

const ACCOUNT_COLUMNS = sql`a.account_sid, a.organization_id, a.enabled, a.version, a.managed_by, a.created_at, a.updated_at`;

export async function listAccounts(q: Queryable, organizationId: number): Promise<AccountRow[]> {
  return q.run<AccountRow>(sql`SELECT ${ACCOUNT_COLUMNS} FROM messaging_accounts a WHERE a.organization_id = ${organizationId} ORDER BY a.account_sid`);
}

export async function accountOfOrganization(q: Queryable, organizationId: number, sid: string, lock = false): Promise<AccountRow | undefined> {
  const [row] = await q.run<AccountRow>(
    sql`SELECT ${ACCOUNT_COLUMNS} FROM messaging_accounts a WHERE a.account_sid = ${sid} AND a.organization_id = ${organizationId}
      ${lock ? sql`FOR UPDATE` : sql.empty}`,
  );
  return row;
}

export async function insertAccount(
  q: Queryable,
  sid: string,
  organizationId: number,
  authToken: string,
  enabled: boolean,
  now: Date,
): Promise<AccountRow | undefined> {
  const [row] = await q.run<AccountRow>(sql`
    INSERT INTO messaging_accounts AS a (account_sid, organization_id, auth_token, enabled, managed_by, created_at, updated_at)
    VALUES (${sid}, ${organizationId}, ${authToken}, ${enabled}, 'admin', ${now}, ${now})
    ON CONFLICT DO NOTHING
    RETURNING ${ACCOUNT_COLUMNS}`);
  return row;
}

export async function updateAccount(q: Queryable, sid: string, authToken: string | undefined, enabled: boolean, now: Date): Promise<AccountRow> {
  const [row] = await q.run<AccountRow>(sql`
    UPDATE messaging_accounts a SET auth_token = coalesce(${authToken ?? null}::text, a.auth_token), enabled = ${enabled}, version = a.version + 1,
      updated_at = ${now}
    WHERE a.account_sid = ${sid}
    RETURNING ${ACCOUNT_COLUMNS}`);
  return row as AccountRow;
}

/** Whether a message came in through the account (R2's history). */
export async function accountHasHistory(q: Queryable, sid: string): Promise<boolean> {
  return (await q.run(sql`SELECT 1 FROM radio_messages WHERE account_sid = ${sid} LIMIT 1`)).length > 0;
}

export async function deleteAccount(q: Queryable, sid: string): Promise<void> {
  await q.run(sql`DELETE FROM messaging_accounts WHERE account_sid = ${sid}`);
}

/** The file's entry, made the file's; the row before (undefined: new). */
export async function upsertFileAccount(
  q: Queryable,
  sid: string,
  organizationId: number,
  authToken: string,
  enabled: boolean,
  now: Date,
): Promise<AccountRow | undefined> {
  const [before] = await q.run<AccountRow>(sql`SELECT ${ACCOUNT_COLUMNS} FROM messaging_accounts a WHERE a.account_sid = ${sid} FOR UPDATE`);
  if (before === undefined) {
    await q.run(sql`INSERT INTO messaging_accounts (account_sid, organization_id, auth_token, enabled, managed_by, created_at, updated_at)
      VALUES (${sid}, ${organizationId}, ${authToken}, ${enabled}, 'file', ${now}, ${now})`);
    return undefined;
  }
  await q.run(sql`
    UPDATE messaging_accounts a SET organization_id = ${organizationId}, auth_token = ${authToken}, enabled = ${enabled}, managed_by = 'file',
      version = a.version + 1, updated_at = ${now}
    WHERE a.account_sid = ${sid} AND (a.organization_id, a.auth_token, a.enabled, a.managed_by)
      IS DISTINCT FROM (${organizationId}::int, ${authToken}::text, ${enabled}::boolean, 'file')`);
  return before;
}
