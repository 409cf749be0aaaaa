// SQL of the CFH announcements: asking for the announcement job, and which edge devices announce a
// request's status, in which language (the option's French words are Call for Help's to give:
// announce.ts RequestWords).
import type { Queryable, Tx } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { enqueueReplacingJobs } from '../jobs/queue.ts';
import type { EventRow } from '../events/log.ts';
import { replacesPending, WAITING_RANK } from './announce-rules.ts';
import type { Edge } from './store.ts';

/** The SQL of WAITING_RANK for a status expression (null for a status outside it). */
const waitingRank = (status: string) =>
  `(CASE ${status} ${Object.entries(WAITING_RANK)
    .map(([s, n]) => `WHEN '${s}' THEN ${n}`)
    .join(' ')} END)`;

/**
 * One pending announcement job per request, due a few seconds after its latest event; a later
 * event of the same request replaces the pending job's status and moves it (the latest is said),
 * unless no edge device of the location announces it (it would say nothing in place of something)
 * or it says less than the pending one (announce-rules.ts replacesPending).
 */
export async function askForAnnouncements(q: Tx, kind: string, events: readonly EventRow[], runAt: Date): Promise<void> {
  const cfh = events.filter((e) => e.type === 'callforhelp' && e.location_id !== null && e.internal_id !== null);
  if (cfh.length === 0) return;
  const announced = await announcedStatuses(q, [...new Set(cfh.map((e) => e.location_id as number))]);
  // In commit order: a request's latest announced status in the batch, as the pending job would take it.
  const latest = new Map<string, EventRow>();
  for (const e of cfh) {
    if (!announced.get(e.location_id as number)?.has(e.status)) continue;
    const pending = latest.get(e.internal_id ?? '');
    if (pending === undefined || replacesPending(pending.status, e.status)) latest.set(e.internal_id ?? '', e);
  }
  const list = [...latest.values()];
  if (list.length === 0) return;
  // The pending job of the key takes the new status only if it says as much (waitingRank).
  await q.run(
    enqueueReplacingJobs(
      sql`SELECT ${kind}::text, jsonb_build_object('request_id', e.internal_id, 'organization_id', e.organization_id, 'location_id', e.location_id,
           'status', e.status, 'details', e.details),
         ${runAt}::timestamptz, 'radio.announce:' || e.internal_id
       FROM unnest(${list.map((e) => e.internal_id)}::text[], ${list.map((e) => e.organization_id)}::int[], ${list.map((e) => e.location_id)}::int[],
         ${list.map((e) => e.status)}::text[], ${list.map((e) => JSON.stringify(e.details))}::jsonb[]) AS e(internal_id, organization_id, location_id, status, details)`,
      sql`coalesce(${sql.raw(waitingRank("EXCLUDED.payload->>'status'"))} >= ${sql.raw(waitingRank("jobs.payload->>'status'"))}, true)`,
    ),
  );
}

/** The CFH statuses some edge device of each location announces. */
async function announcedStatuses(q: Queryable, locationIds: number[]): Promise<Map<number, Set<string>>> {
  const rows = await q.query<{ location_id: number; statuses: string[] }>(
    `SELECT location_id, array_agg(DISTINCT s) AS statuses FROM radio_edges, unnest(announce_cfh) AS s
     WHERE location_id = ANY ($1::int[]) AND enabled GROUP BY location_id`,
    [locationIds],
  );
  return new Map(rows.map((r) => [r.location_id, new Set(r.statuses)]));
}

/** The edge devices of the location that announce this status, with the location's language. */
export async function announcingEdges(q: Queryable, locationId: number, status: string): Promise<{ edge: Edge; language: string | null }[]> {
  const rows = await q.query<{ edge_id: string; organization_id: number; location_id: number; voice_handlers: string[]; language: string | null }>(
    `SELECT r.edge_id, r.organization_id, r.location_id, r.voice_handlers, l.language
     FROM radio_edges r JOIN locations l ON l.id = r.location_id
     WHERE r.location_id = $1 AND $2 = ANY (r.announce_cfh) AND r.enabled
     ORDER BY r.edge_id`,
    [locationId, status],
  );
  return rows.map((r) => ({
    edge: { edgeId: r.edge_id, organizationId: r.organization_id, locationId: r.location_id, voiceHandlers: r.voice_handlers as Edge['voiceHandlers'] },
    language: r.language,
  }));
}
