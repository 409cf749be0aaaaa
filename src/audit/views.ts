// The audit log's wire formats (contract section 17): an entry as listAuditEntries shows it, and as
// exportAuditEntries writes it, one CSV row per entry after a header row, its cells spreadsheet-safe.
import { Readable } from 'node:stream';
import { csvLine } from '../http/csv.ts';
import type { AuditRow } from './store.ts';

export function auditEntryView(row: AuditRow) {
  return {
    id: row.id,
    at: row.at,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    action: row.action,
    target: row.target_type === null ? null : { type: row.target_type, id: row.target_id, name: row.target_name },
    organization_id: row.organization_id,
    location_id: row.location_id,
    changes: row.changes,
    ip: row.ip,
    user_agent: row.user_agent,
  };
}

export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'actor_type',
  'actor_id',
  'actor_name',
  'action',
  'target_type',
  'target_id',
  'target_name',
  'organization_id',
  'location_id',
  'changes',
  'ip',
  'user_agent',
] as const;

function csvRow(row: AuditRow): string {
  const wire: Record<(typeof AUDIT_CSV_COLUMNS)[number], string | number | null> = { ...row, changes: JSON.stringify(row.changes) };
  return csvLine(AUDIT_CSV_COLUMNS.map((c) => wire[c]));
}

/** The CSV as a stream: the header, then each page as it is read. */
export function auditCsvStream(pages: AsyncIterable<AuditRow[]>): Readable {
  return Readable.from(
    (async function* lines() {
      yield csvLine(AUDIT_CSV_COLUMNS);
      for await (const page of pages) yield page.map(csvRow).join('');
    })(),
  );
}
