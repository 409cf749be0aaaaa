// actor.ts's mayReach as SQL: the one predicate every store puts on the rows an actor reads or
// changes, so that another organization's row, or one outside the actor's locations, is found
// exactly as a row that does not exist (404, existence not leaked). tests/access/ holds the two
// answers to each other on the real database.
import { sql, type Sql } from '../db/sql.ts';
import type { Actor } from './actor.ts';

/** The predicate's two values: the organization (null: a customer, whose capability already
 * picked the row) and the locations (null: all of the organization's). */
function reachValues(actor: Actor): [organizationId: number | null, locationIds: number[] | null] {
  if (actor.kind === 'customer') return [null, null];
  const { organizationId, locationIds } = actor.reach;
  return [organizationId, locationIds === null ? null : [...locationIds]];
}

/**
 * May the actor reach the row `row` (an alias with organization_id and, by default, location_id;
 * a locations row passes 'id')? E.g. `sql\`SELECT ... FROM webhook_endpoints w WHERE w.id = ${id}
 * AND ${reachSql(actor, sql.raw('w'))}\``.
 */
export function reachSql(actor: Actor, row: Sql, locationColumn = 'location_id'): Sql {
  const [organizationId, locationIds] = reachValues(actor);
  return reachOfSql({ organizationId, locationIds }, row, locationColumn);
}

/** reachSql for a reach already taken from its actor (a statement's input that carries it). */
export function reachOfSql(reach: { organizationId: number | null; locationIds: readonly number[] | null }, row: Sql, locationColumn = 'location_id'): Sql {
  const organization = sql`${reach.organizationId}`;
  const locations = sql`${reach.locationIds === null ? null : [...reach.locationIds]}`;
  return sql`(${organization}::int IS NULL OR ${row}.organization_id = ${organization}) AND (${locations}::int[] IS NULL OR ${row}.${sql.raw(locationColumn)} = ANY (${locations}::int[]))`;
}
