// The reports' use cases (P1-P3): a range checked, then one read each. P2 is read in pages so a
// year of a busy store streams without being held in memory.
import { mayReach, type OrganizationActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/db.ts';
import { notFound } from '../http/errors.ts';
import { credentialOf, type ReportGate } from './gate.ts';
import { dayRange, perDay, percentiles, spansOf } from './rules.ts';
import type { CfhReport, LockerReport, ReportQuery } from './schemas.ts';
import * as store from './store.ts';

export interface ReportDeps {
  db: Queryable;
  clock: Clock;
  /** How many reports run at once, per credential and on the instance. */
  reportGate: ReportGate;
}

/** Rows per page of P2: a page is one short query on the range's index. */
export const EXPORT_PAGE = 500;

const noLocation = () => notFound('location');

/**
 * A location outside the actor's locations is as unknown as another organization's, and is known
 * without a read, so it is refused before the range is looked at; the report's own statement keeps
 * to the actor's organization.
 */
function checkReach(actor: OrganizationActor, locationId: number): void {
  if (!mayReach(actor, { organizationId: actor.reach.organizationId, locationId })) throw noLocation();
}

/** P1. */
export async function cfhReport(deps: ReportDeps, actor: OrganizationActor, query: ReportQuery): Promise<CfhReport> {
  checkReach(actor, query.location_id);
  const range = dayRange(query.from, query.to);
  const figures = await deps.reportGate.run(credentialOf(actor), () =>
    store.cfhFigures(deps.db, actor.reach.organizationId, query.location_id, range, spansOf(range)),
  );
  if (figures === null) throw noLocation();
  const { durations, days, ...counts } = figures;
  const of = (kind: string) => percentiles((durations ?? []).filter((d) => d.kind === kind));
  return {
    location_id: query.location_id,
    from: range.from,
    to: range.to,
    ...counts,
    per_day: perDay(range, days),
    time_to_claim: of('claim'),
    time_to_on_the_way: of('on_the_way'),
    time_to_complete: of('complete'),
  };
}

/** P3. */
export async function lockerReport(deps: ReportDeps, actor: OrganizationActor, query: ReportQuery): Promise<LockerReport> {
  checkReach(actor, query.location_id);
  const { from, to } = dayRange(query.from, query.to);
  const figures = await deps.reportGate.run(credentialOf(actor), () =>
    store.lockerFigures(deps.db, actor.reach.organizationId, query.location_id, from, to, deps.clock.now()),
  );
  if (figures === null) throw noLocation();
  return { location_id: query.location_id, from, to, ...figures };
}

/**
 * P2: checks the range and the location before anything is sent (its errors are JSON), then
 * yields the requests page by page (keyset on created_at, id). Pages are separate reads: a request
 * created during the export, in the range, may or may not be in it.
 */
export async function exportRequests(deps: ReportDeps, actor: OrganizationActor, query: ReportQuery): Promise<AsyncIterable<store.ExportRow[]>> {
  checkReach(actor, query.location_id);
  const { from, to } = dayRange(query.from, query.to);
  const bounds = await store.rangeBounds(deps.db, actor.reach.organizationId, query.location_id, from, to);
  if (bounds === null) throw noLocation();
  return (async function* pages() {
    let after: { createdAt: string; id: number } | null = null;
    for (;;) {
      // Each page takes its turn: a slow reader of a long export holds no connection between pages.
      const page = await deps.reportGate.run(credentialOf(actor), () => store.exportPage(deps.db, query.location_id, bounds, after, EXPORT_PAGE));
      if (page.length > 0) yield page;
      if (page.length < EXPORT_PAGE) return;
      const last = page[page.length - 1] as store.ExportRow;
      after = { createdAt: last.created_at, id: last.id };
    }
  })();
}
