// The locations an actor of an organization reaches, read with reach-sql.ts's predicate: what a
// location-wide operation (C7, C8, D1, the console's pages) checks before it reads, so that a
// location of another organization, or outside the actor's locations, is as unknown as none.
// A customer is not asked: its capability names one object, never a location.
import { sql } from '../db/sql.ts';
import type { Queryable } from '../db/db.ts';
import type { OrganizationActor } from './actor.ts';
import { reachSql } from './reach-sql.ts';

export interface ReachedLocation {
  id: number;
  name: string;
}

/** Whether the actor reaches the location (a location that does not exist is not reached). */
export async function reachesLocation(q: Queryable, actor: OrganizationActor, locationId: number): Promise<boolean> {
  const rows = await q.run(sql`SELECT 1 FROM locations l WHERE l.id = ${locationId} AND ${reachSql(actor, sql.raw('l'), 'id')}`);
  return rows.length > 0;
}

/** Every location the actor reaches, by name. */
export function reachedLocations(q: Queryable, actor: OrganizationActor): Promise<ReachedLocation[]> {
  return q.run<ReachedLocation>(sql`SELECT l.id, l.name FROM locations l WHERE ${reachSql(actor, sql.raw('l'), 'id')} ORDER BY l.name, l.id`);
}
