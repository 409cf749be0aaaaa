// Reading the audit log (contract sections 17 and 18): listAuditEntries, a page at a time newest
// first, and exportAuditEntries, every entry of the filters as CSV read in pages. An org_admin or an
// admin token of the whole organization reads the organization's entries, organization-wide ones
// too; a location_admin (or a token limited to locations) those of the locations it administers.
// Nothing here changes an entry: no operation does (retention alone deletes old ones).
import type { OrganizationActor } from '../access/actor.ts';
import { locationVerdict } from '../access/locations.ts';
import type { Queryable } from '../db/db.ts';
import { AppError, invalid, notFound } from '../http/errors.ts';
import { administeredBy } from '../admin/auth.ts';
import { auditPage, type AuditCursor, type AuditFilter, type AuditRow } from './store.ts';

export interface AuditDeps {
  db: Queryable;
}

export interface AuditQuery {
  location_id?: number | undefined;
  from?: string | undefined;
  to?: string | undefined;
  action?: string | undefined;
}

export interface AuditPage {
  entries: AuditRow[];
  /** The `cursor` of the next page; null on the last one. */
  nextCursor: string | null;
}

/** Rows per statement of the export. */
const EXPORT_PAGE = 500;

const DAY = /^\d{4}-\d\d-\d\d$/;
const INSTANT = /^(\d{4}-\d\d-\d\d)T(\d\d):(\d\d)(?::(\d\d)(\.\d{1,6})?)?(?:Z|[+-](\d\d):(\d\d))$/;

/** A date-time of the calendar: no February 30th or 25 o'clock (which Date.parse would roll over). */
function isInstant(raw: string): boolean {
  const m = INSTANT.exec(raw);
  if (m === null) return false;
  const [, date, hours, minutes, seconds, , zoneHours, zoneMinutes] = m;
  const realDay = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(realDay.getTime()) || realDay.toISOString().slice(0, 10) !== date) return false;
  return Number(hours) < 24 && Number(minutes) < 60 && Number(seconds ?? 0) < 60 && Number(zoneHours ?? 0) < 24 && Number(zoneMinutes ?? 0) < 60;
}

/** A time of the query: a date (YYYY-MM-DD, its UTC day) or a date-time with its zone. */
function bound(name: string, raw: string): { at: string; day: boolean } {
  const day = DAY.test(raw);
  const at = day ? `${raw}T00:00:00Z` : raw;
  if ((!day && !isInstant(raw)) || !Number.isFinite(Date.parse(at)) || new Date(Date.parse(at)).getUTCFullYear() > 9999) {
    throw invalid(name, 'must be a date (YYYY-MM-DD) or a date-time with its zone (e.g. 2026-01-15T09:00:00Z)');
  }
  if (day && new Date(Date.parse(at)).toISOString().slice(0, 10) !== raw) throw invalid(name, 'is not a day of the calendar');
  return { at, day };
}

/** The day after a YYYY-MM-DD, at midnight UTC. */
const nextDay = (at: string) => new Date(Date.parse(at) + 86_400_000).toISOString();

/** The query as a filter on what the actor administers; the location, when given, checked (404, 403). */
async function filterOf(deps: AuditDeps, actor: OrganizationActor, query: AuditQuery): Promise<AuditFilter> {
  const locationId = query.location_id ?? null;
  const from = query.from === undefined ? null : bound('from', query.from);
  const to = query.to === undefined ? null : bound('to', query.to);
  const toFilter = to === null ? null : to.day ? { at: nextDay(to.at), inclusive: false } : { at: to.at, inclusive: true };
  if (from !== null && toFilter !== null) {
    const [start, end] = [Date.parse(from.at), Date.parse(toFilter.at)];
    if (toFilter.inclusive ? start > end : start >= end) throw invalid('from', 'must not be after to');
  }
  if (locationId !== null) {
    const verdict = await locationVerdict(deps.db, actor, locationId, 'administer');
    if (verdict === 'unknown') throw notFound('location');
    if (verdict === 'visible') throw new AppError(403, 'forbidden', "a location's audit log is for its admins");
  }
  const reach = administeredBy(actor).reach;
  return {
    organizationId: reach.organizationId,
    locationIds: reach.locationIds,
    locationId,
    from: from?.at ?? null,
    to: toFilter,
    action: query.action ?? null,
  };
}

const encodeCursor = (c: AuditCursor) => Buffer.from(JSON.stringify([c.at, c.id])).toString('base64url');

function decodeCursor(raw: string): AuditCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && isInstant(at) && Number.isSafeInteger(id) && (id as number) > 0) return { at, id: id as number };
  } catch {
    // falls through
  }
  throw invalid('cursor', 'is not a cursor this listing gave');
}

/** listAuditEntries: a page of `limit` entries, newest first, after `cursor`. */
export async function listAuditEntries(
  deps: AuditDeps,
  actor: OrganizationActor,
  query: AuditQuery & { cursor?: string | undefined; limit: number },
): Promise<AuditPage> {
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const filter = await filterOf(deps, actor, query);
  const rows = await auditPage(deps.db, filter, after, query.limit + 1);
  const entries = rows.slice(0, query.limit);
  const last = entries.at(-1);
  return { entries, nextCursor: rows.length > query.limit && last !== undefined ? encodeCursor({ at: last.at, id: last.id }) : null };
}

/** exportAuditEntries: every entry of the filters, newest first, read a page at a time as it is sent. */
export async function exportAuditEntries(deps: AuditDeps, actor: OrganizationActor, query: AuditQuery): Promise<AsyncIterable<AuditRow[]>> {
  const filter = await filterOf(deps, actor, query);
  return (async function* pages() {
    let after: AuditCursor | null = null;
    for (;;) {
      const page = await auditPage(deps.db, filter, after, EXPORT_PAGE);
      if (page.length > 0) yield page;
      const last = page.at(-1);
      if (page.length < EXPORT_PAGE || last === undefined) return;
      after = { at: last.at, id: last.id };
    }
  })();
}
