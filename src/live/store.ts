// The live feed's one read of the event log: what committed since the feed's last look, by the
// snapshots of the two looks. Every transaction a snapshot sees is committed, so what the last look
// saw was handed on; what this one sees and that one did not (a transaction that began after it,
// or one it saw running) is new. Nothing waits for the oldest running transaction of the cluster.
import type { Queryable } from '../db/db.ts';
import type { EventRow } from '../events/log.ts';

const COLUMNS = 'id, uuid, tx_id, type, status, organization_id, location_id, internal_id, details, message, created_at';

/** Where the log stands now: the snapshot a feed placed now compares its first look with. */
export async function currentSnapshot(q: Queryable): Promise<string> {
  const [row] = await q.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot');
  return (row as { snapshot: string }).snapshot;
}

/**
 * The events of the transactions that committed between the snapshot `since` and now, in commit
 * order as far as the log tells it (transaction id, then event id), with the snapshot of now.
 */
export async function committedSince(q: Queryable, since: string): Promise<{ snapshot: string; events: EventRow[] }> {
  const rows = await q.query<EventRow & { snapshot: string; tx_id: string | null }>(
    `WITH now AS (SELECT pg_current_snapshot() AS s)
     SELECT now.s::text AS snapshot, e.id, e.uuid, e.type, e.status, e.organization_id, e.location_id, e.internal_id, e.details, e.message,
       e.created_at, e.tx_id::text AS tx_id
     FROM now LEFT JOIN LATERAL (
       SELECT ${COLUMNS} FROM events WHERE tx_id >= pg_snapshot_xmax($1::pg_snapshot) AND pg_visible_in_snapshot(tx_id, now.s)
       UNION ALL
       SELECT ${COLUMNS} FROM events
       WHERE tx_id = ANY (ARRAY(SELECT pg_snapshot_xip($1::pg_snapshot))) AND pg_visible_in_snapshot(tx_id, now.s)
     ) e ON true
     ORDER BY e.tx_id, e.id`,
    [since],
  );
  const snapshot = rows[0]?.snapshot ?? since;
  const events = rows.filter((r) => r.tx_id !== null).map(({ snapshot: _s, tx_id: _t, ...event }) => event);
  return { snapshot, events };
}
