// SQL of a scan (contract section 19): the request locked with the digests of the codes that may
// prove arrival (its option's, button's and display's, each only when that one has require_scan),
// and the arrival written with its step and event in one statement.
import type { Actor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable, Tx } from '../db/db.ts';
import { cte, sql, withCtes } from '../db/sql.ts';
import { insertEvents } from '../events/log.ts';
import type { Staff } from './rules.ts';
import { CHANGED, eventsOf, requiresScan, STEP_COLUMNS } from './sql.ts';

export interface ScanTargetRow {
  id: number;
  is_closed: boolean;
  require_scan: boolean;
  employee_arrived_at: string | null;
  digests: string[];
}

export async function lockForScan(q: Queryable, actor: Actor, messageId: string): Promise<ScanTargetRow | null> {
  const [row] = await q.run<ScanTargetRow>(
    sql`SELECT r.id, r.is_closed, r.employee_arrived_at, ${sql.raw(requiresScan('r'))} AS require_scan,
       array_remove(ARRAY[
         (SELECT o.scan_code_hash FROM cfh_options o WHERE o.id = r.option_id AND o.require_scan),
         (SELECT b.scan_code_hash FROM call_buttons b WHERE b.id = r.callbutton_id AND b.require_scan),
         (SELECT d.scan_code_hash FROM cfh_displays d WHERE d.id = r.display_id AND d.require_scan)], NULL) AS digests
     FROM cfh_requests r WHERE r.message_id = ${messageId} AND ${reachSql(actor, sql.raw('r'))} FOR UPDATE OF r`,
  );
  return row ?? null;
}

/** Records the arrival of the locked request; its time in the wire format. */
export async function writeArrival(q: Tx, id: number, staff: Staff, tokenId: number | null, lead: string, now: Date): Promise<string> {
  const at = sql`${now}::timestamptz`;
  const [row] = await q.run<{ employee_arrived_at: string }>(
    withCtes(
      [
        cte('r', sql`UPDATE cfh_requests SET employee_arrived_at = ${at}, updated_at = ${at} WHERE id = ${id} RETURNING ${CHANGED}, employee_arrived_at`),
        cte(
          'step',
          sql`INSERT INTO cfh_request_events (${STEP_COLUMNS})
            SELECT r.id, 'arrived', ${at}, ${tokenId}, ${staff.name}, ${staff.userId}, ${staff.channelId}, ${staff.from}, NULL FROM r`,
        ),
        cte('ev', insertEvents(eventsOf({ status: sql`'arrived'`, lead: sql`${lead}::text`, requestFrom: sql`${staff.from}::text`, at }))),
      ],
      sql`SELECT employee_arrived_at FROM r`,
    ),
  );
  if (row === undefined) throw new Error('the arrival of a locked CFH request wrote nothing');
  return row.employee_arrived_at;
}
