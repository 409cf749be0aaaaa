// The locations an actor of an organization reaches, read with reach-sql.ts's predicate: what a
// location-wide operation (C7, C8, D1, the console's pages) checks before it reads, so that a
// location of another organization, or outside the actor's locations, is as unknown as none.
// A customer is not asked: its capability names one object, never a location.
import { sql } from '../db/sql.ts';
import type { Queryable } from '../db/db.ts';
import { mayDo, type Ability, type OrganizationActor } from './actor.ts';
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

/** What an actor may do at a location (section 17): nothing, it is out of its reach (404, as one that
 * does not exist); it sees it but may not do this there (403); or it may. */
export type LocationVerdict = 'unknown' | 'visible' | 'allowed';

/** The actor's verdict on a location for an ability (mayDo, after the location is found in its reach). */
export async function locationVerdict(q: Queryable, actor: OrganizationActor, locationId: number, ability: Ability): Promise<LocationVerdict> {
  if (!(await reachesLocation(q, actor, locationId))) return 'unknown';
  return mayDo(actor, ability, { organizationId: actor.reach.organizationId, locationId }) ? 'allowed' : 'visible';
}
