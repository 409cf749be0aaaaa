// The state of a location's lockers: L1 lists it; L7 is a version 2 locker reporting its doors,
// all or nothing, each door it finds changed written as an event.
import { notFound } from '../http/errors.ts';
import { invalidReport, repeatedKeys, silentEntries, unknownKeys, unstorableJson, unsupportedVersion } from './rules.ts';
import { applyStatusReport } from './cabinet-store.ts';
import { locationListingJson } from './store.ts';
import type { DoorState, LockerDeps } from './types.ts';

/** L1: the body as JSON text, built by the database. */
export async function locationLockersJson(deps: LockerDeps, locationId: number): Promise<string> {
  const body = await locationListingJson(deps.db, locationId, deps.clock.now());
  if (body === undefined) throw notFound(`location ${locationId}`);
  return body;
}

export interface StatusReportRequest {
  /** A door null or absent is not reported: it keeps its state. */
  cabinets: { key: number; front_status?: DoorState | null; rear_status?: DoorState | null }[];
  locker_info?: { ip?: string; firmware?: string };
  event?: { type: string; [field: string]: unknown };
}

/** L7 from the locker the api-key named. */
export async function reportStatus(deps: LockerDeps, locker: { id: number; version: number }, report: StatusReportRequest): Promise<void> {
  const versionProblem = unsupportedVersion(locker.version);
  if (versionProblem !== null) throw versionProblem;
  const { cabinets, locker_info: info, event } = report;
  const eventProblem = unstorableJson(event);
  if (eventProblem !== null) throw invalidReport({ event: [eventProblem] });
  const silent = silentEntries(cabinets);
  if (silent !== null) throw invalidReport(silent);
  const repeated = repeatedKeys(cabinets);
  if (repeated !== null) throw invalidReport(repeated);
  const now = deps.clock.now();
  const unknown = await deps.db.statement((q) =>
    applyStatusReport(
      q,
      {
        lockerId: locker.id,
        keys: cabinets.map((c) => c.key),
        front: cabinets.map((c) => c.front_status ?? null),
        rear: cabinets.map((c) => c.rear_status ?? null),
        ip: info?.ip ?? null,
        firmware: info?.firmware ?? null,
        eventType: event?.type ?? null,
        event: event ?? null,
      },
      now,
    ),
  );
  if (unknown.length > 0) throw invalidReport(unknownKeys(cabinets, unknown));
}
