// C7: a location's requests, newest first, in keyset pages (cursor: the id of the last request of
// the previous page), each with its option's staff_action. A location of another organization, or
// outside the token's locations, is not found.
import type { Queryable } from '../db/db.ts';
import { notFound } from '../http/errors.ts';
import { locationOfOrganization, requestPage, type ListState } from './list-store.ts';
import type { Caller } from './requests.ts';
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

/** The location, if the caller may see it (of its organization, within its token's locations); else 404. */
export async function checkLocation(db: Queryable, caller: Caller, locationId: number): Promise<void> {
  const visible =
    caller.organizationId !== null &&
    (caller.locationIds === null || caller.locationIds.includes(locationId)) &&
    (await locationOfOrganization(db, locationId, caller.organizationId));
  if (!visible) throw notFound(`location ${locationId}`);
}

export async function listRequests(deps: { db: Queryable }, caller: Caller, query: ListQuery): Promise<RequestPage> {
  await checkLocation(deps.db, caller, query.locationId);
  const requests = await requestPage(deps.db, query.locationId, query.state, query.from, query.to, query.cursor, query.limit);
  return { requests, nextCursor: requests.length === query.limit ? (requests.at(-1)?.id ?? null) : null };
}
