// Writing the event log (contract section 11): each use case records the events of its change in
// the transaction of that change; the commit then wakes the log's subscribers (db signals).
import type { Queryable, Tx } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';

export const EVENT_TYPES = ['callforhelp', 'locker', 'radio', 'device'] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  type: EventType;
  status: string;
  organizationId: number;
  locationId: number | null;
  /** The changed thing's own id: a request's id, an order's id, a radio message_id. */
  internalId: string | number | null;
  details: Record<string, unknown>;
  message?: string | null;
}

/** A stored event, as subscribers read it. */
export interface EventRow {
  id: number;
  uuid: string;
  type: EventType;
  status: string;
  organization_id: number;
  location_id: number | null;
  internal_id: string | null;
  details: Record<string, unknown>;
  message: string | null;
  created_at: string;
}

const COLUMNS = '(type, status, organization_id, location_id, internal_id, details, message, created_at)';

/**
 * The events of a change, for its statement (a CTE): `rows` is a SELECT of the columns type, status,
 * organization_id, location_id, internal_id (text), details (jsonb), message, created_at. The
 * fragment wakes the log's subscribers when the statement holding it commits.
 */
export const insertEvents = (rows: Sql): Sql => sql`INSERT INTO events ${sql.raw(COLUMNS)} ${rows}`.wakes('events');

/**
 * As insertEvents, for a statement that often writes no event (a device report that changes
 * nothing): it returns a row per event and wakes nobody by itself; the caller signals `events`
 * only when the statement wrote some.
 */
export const insertEventsReturning = (rows: Sql): Sql => sql`INSERT INTO events ${sql.raw(COLUMNS)} ${rows} RETURNING 1`;

/**
 * For a store statement still written as text: the INSERT of a CTE, over a SELECT of the columns type, status, organization_id, location_id,
 * internal_id (text), details (jsonb), message, created_at. Marks the transaction as writing events.
 */
export function insertEventsFrom(q: Tx, select: string): string {
  q.signal('events');
  return `INSERT INTO events ${COLUMNS} ${select}`;
}

/**
 * As insertEventsFrom, for a statement that often writes no event (a device report that changes
 * nothing): the INSERT returns a row per event, and the caller signals `events` only when the
 * statement wrote some, so a change without events wakes nobody.
 */
export function insertEventsReturningFrom(select: string): string {
  return `INSERT INTO events ${COLUMNS} ${select} RETURNING 1`;
}

// --- reading the log in commit order ---

/** A reader's place in the log: the last event it has read, in commit order (tx_id, id). */
export interface LogPosition {
  tx_id: string;
  event_id: number;
}

export type CommittedEvent = EventRow & { tx_id: string };

export interface CommittedRead {
  events: CommittedEvent[];
  /** Events after these exist but belong to transactions some running transaction is older than:
   * readable once it ends (a reader should look again soon, not wait for its poll). */
  held: boolean;
}

/**
 * The oldest transaction still running that may write this database's log: of the snapshot's
 * running ones, those the server shows to be of another database cannot (a transaction stays in
 * its database), so a long transaction elsewhere in the cluster holds no reader back. One it does
 * not show (ended meanwhile, or hidden from this role) counts as this database's.
 */
const OWN_XMIN = `SELECT coalesce(min(x), pg_snapshot_xmax(pg_current_snapshot())) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
  WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = x::xid AND a.datname IS DISTINCT FROM current_database())`;

/**
 * The events after `after`, in commit order, of transactions older than every running one: none
 * of those can still commit an event that sorts before what is returned, so a reader that moves
 * its position to the last one returned never skips a late commit. (All such events sort before
 * any event of a newer transaction, so one ordered read tells both apart.)
 */
export async function readCommitted(q: Queryable, after: LogPosition, limit: number): Promise<CommittedRead> {
  const rows = await q.query<CommittedEvent & { visible: boolean }>(
    `SELECT id, uuid, tx_id::text AS tx_id, type, status, organization_id, location_id, internal_id, details, message, created_at,
       tx_id < (${OWN_XMIN}) AS visible
     FROM events
     WHERE (tx_id, id) > ($1::xid8, $2::bigint)
     ORDER BY tx_id, id LIMIT $3`,
    [after.tx_id, after.event_id, limit],
  );
  const events: CommittedEvent[] = [];
  for (const { visible, ...event } of rows) {
    if (!visible) return { events, held: true };
    events.push(event);
  }
  return { events, held: false };
}

/** The SELECT of the log's end: the last event no running transaction can still come before
 * (columns tx_id, id; no row when the log is empty). */
export const LOG_END = `SELECT tx_id, id FROM events WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY tx_id DESC, id DESC LIMIT 1`;
