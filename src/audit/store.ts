// The audit log's reads (record.ts is its one writer) and retention's deletion of old entries, the
// only statement that removes an entry. A read names only the conditions it has, so each query is
// planned for what it asks (the pool's plans are generic).
import type { Queryable } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';
import type { AuditActorType } from './record.ts';

export interface AuditRow {
  id: number;
  at: string;
  organization_id: number | null;
  location_id: number | null;
  actor_type: AuditActorType;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_name: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
  ip: string | null;
  user_agent: string | null;
}

/** Which entries: the organization's (within `locationIds` when the reader is limited to some: an
 * organization-wide entry is then out of reach), narrowed by the query's filters. */
export interface AuditFilter {
  organizationId: number;
  locationIds: readonly number[] | null;
  locationId: number | null;
  /** Entries at or after (a timestamptz as text). */
  from: string | null;
  /** Entries before (`inclusive`: at or before) this time (a timestamptz as text). */
  to: { at: string; inclusive: boolean } | null;
  /** An action word, or the family before its dot: `person` finds `person.created` and `person`. */
  action: string | null;
}

/** Where a page starts: after the last entry of the previous one, newest first. */
export interface AuditCursor {
  at: string;
  id: number;
}

function conditions(f: AuditFilter, after: AuditCursor | null): Sql {
  const where: Sql[] = [sql`a.organization_id = ${f.organizationId}`];
  if (f.locationIds !== null) where.push(sql`a.location_id = ANY (${[...f.locationIds]}::int[])`);
  if (f.locationId !== null) where.push(sql`a.location_id = ${f.locationId}`);
  if (f.from !== null) where.push(sql`a.at >= ${f.from}::timestamptz`);
  if (f.to !== null) where.push(f.to.inclusive ? sql`a.at <= ${f.to.at}::timestamptz` : sql`a.at < ${f.to.at}::timestamptz`);
  if (f.action !== null) where.push(sql`(a.action = ${f.action} OR starts_with(a.action, ${`${f.action}.`}))`);
  if (after !== null) where.push(sql`(a.at, a.id) < (${after.at}::timestamptz, ${after.id}::bigint)`);
  return sql.join(where, ' AND ');
}

/** A page of entries, newest first (the same time: the later written first). */
export function auditPage(q: Queryable, filter: AuditFilter, after: AuditCursor | null, limit: number): Promise<AuditRow[]> {
  return q.run<AuditRow>(sql`
    SELECT a.id, a.at, a.organization_id, a.location_id, a.actor_type, a.actor_id, a.actor_name, a.action,
      a.target_type, a.target_id, a.target_name, a.changes, a.ip, a.user_agent
    FROM audit_entries a
    WHERE ${conditions(filter, after)}
    ORDER BY a.at DESC, a.id DESC
    LIMIT ${limit}`);
}

/** Retention (AUDIT_RETENTION_DAYS): up to `limit` of the oldest entries written before the cutoff
 * (index audit_entries_at); rows another instance is deleting are skipped. */
export const deleteAuditEntriesBefore = (cutoff: Date, limit: number): Sql =>
  sql`DELETE FROM audit_entries WHERE id IN (
    SELECT id FROM audit_entries WHERE at < ${cutoff} ORDER BY at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`;
