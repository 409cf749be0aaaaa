// C7: a location's requests, newest first, in keyset pages (cursor: the id of the last request of
// the previous page), each with its option's staff_action. A location outside the actor's reach is
// not found.
import type { OrganizationActor } from '../access/actor.ts';
import { reachesLocation } from '../access/locations.ts';
import type { Queryable } from '../db/db.ts';
import { notFound } from '../http/errors.ts';
import { requestPage, type ListState } from './list-store.ts';
import type { RequestRow } from './rows.ts';

export type { ListState } from './list-store.ts';

export interface ListQuery {
  locationId: number;
  state: ListState;
  from: Date | null;
  to: Date | null;
  limit: number;
  cursor: number | null;
}

export interface RequestPage {
  requests: RequestRow[];
  /** The cursor of the next page; null on the last one. */
  nextCursor: number | null;
}

/** The location, if the actor reaches it; else 404. */
export async function checkLocation(db: Queryable, actor: OrganizationActor, locationId: number): Promise<void> {
  if (!(await reachesLocation(db, actor, locationId))) throw notFound(`location ${locationId}`);
}

export async function listRequests(deps: { db: Queryable }, actor: OrganizationActor, query: ListQuery): Promise<RequestPage> {
  await checkLocation(deps.db, actor, query.locationId);
  const requests = await requestPage(deps.db, query.locationId, query.state, query.from, query.to, query.cursor, query.limit);
  return { requests, nextCursor: requests.length === query.limit ? (requests.at(-1)?.id ?? null) : null };
}
