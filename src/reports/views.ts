// The wire format of P2: CSV (RFC 4180, CRLF line ends), one header row, one row per request with
// its record's fields (as C0 shows them: is_completed 0/1, closed_at and customer_canceled_at in
// seconds), its option's text, its source, and its durations in seconds.
import { Readable } from 'node:stream';
import { sqlSeconds } from '../db/timestamps.ts';
import { csvLine } from '../http/csv.ts';
import type { ExportRow } from './store.ts';

const COLUMNS = [
  'id',
  'message_id',
  'organization_id',
  'location_id',
  'option_id',
  'option_text',
  'source',
  'device_id',
  'display_id',
  'callbutton_id',
  'chat_channel_id',
  'is_claimed',
  'claimed_at',
  'claimed_by',
  'claimed_by_user_id',
  'claimed_from',
  'is_on_the_way',
  'staff_on_the_way_at',
  'is_completed',
  'completed_at',
  'completion_reason',
  'is_canceled',
  'customer_canceled_at',
  'is_timeout',
  'timeout_at',
  'is_closed',
  'closed_at',
  'created_at',
  'updated_at',
  'seconds_to_claim',
  'seconds_to_on_the_way',
  'seconds_to_complete',
] as const;

export const CSV_HEADER = csvLine(COLUMNS);

function csvRow(row: ExportRow): string {
  const wire: Record<(typeof COLUMNS)[number], string | number | boolean | null> = {
    ...row,
    is_completed: row.is_completed ? 1 : 0,
    closed_at: sqlSeconds(row.closed_at),
    customer_canceled_at: sqlSeconds(row.customer_canceled_at),
  };
  return csvLine(COLUMNS.map((c) => wire[c]));
}

/** The CSV as a stream: the header, then each page as it is read. */
export function csvStream(pages: AsyncIterable<ExportRow[]>): Readable {
  return Readable.from(
    (async function* lines() {
      yield CSV_HEADER;
      for await (const page of pages) yield page.map(csvRow).join('');
    })(),
  );
}
