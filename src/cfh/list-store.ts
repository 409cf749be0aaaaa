// SQL of C7: a location's requests in keyset pages, newest first.
import type { Queryable } from '../db/db.ts';
import type { RequestRow } from './rows.ts';
import { RECORD_COLUMNS } from './sql.ts';

export type ListState = 'open' | 'closed' | 'all';

// Spelled out per state so the open listing reads the partial index of open requests.
const STATE_FILTER: Record<ListState, string> = { open: 'AND NOT r.is_closed', closed: 'AND r.is_closed', all: '' };

/** A page of the location's requests older than the cursor's (an id of the location), with staff_action. */
export async function requestPage(
  q: Queryable,
  locationId: number,
  state: ListState,
  from: Date | null,
  to: Date | null,
  cursor: number | null,
  limit: number,
): Promise<RequestRow[]> {
  return q.query<RequestRow>(
    `SELECT ${RECORD_COLUMNS}, o.staff_action
     FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     WHERE r.location_id = $1 ${STATE_FILTER[state]}
       AND ($2::timestamptz IS NULL OR r.created_at >= $2) AND ($3::timestamptz IS NULL OR r.created_at < $3)
       AND ($4::bigint IS NULL OR (r.created_at, r.id) < (SELECT c.created_at, c.id FROM cfh_requests c WHERE c.id = $4 AND c.location_id = $1))
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT $5`,
    [locationId, from, to, cursor, limit],
  );
}

/** One request of the location by id, with staff_action (C8's change events). */
export async function requestOfLocation(q: Queryable, locationId: number, id: number): Promise<RequestRow | null> {
  const [row] = await q.query<RequestRow>(
    `SELECT ${RECORD_COLUMNS}, o.staff_action FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
     WHERE r.id = $1 AND r.location_id = $2`,
    [id, locationId],
  );
  return row ?? null;
}
