// What each console page shows, read as the session's actor: every read names a location the
// session may see (else 404, as another organization's), then asks the feature that owns the data
// (devices/health.ts, radio/transcripts.ts, reports/reports.ts, webhooks/deliveries.ts) or, where
// no feature has the page's shape, the console's own reads (store.ts).
import { reachedLocations, type ReachedLocation } from '../access/locations.ts';
import { mayDo, type Ability, type PersonActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { listDevices, deviceView } from '../devices/health.ts';
import { listRequests } from '../cfh/list.ts';
import type { RequestRow } from '../cfh/rows.ts';
import { toListedRecord } from '../cfh/views.ts';
import { AppError, notFound } from '../http/errors.ts';
import { playedWav, radioTimeline } from '../radio/transcripts.ts';
import type { ReportGate } from '../reports/gate.ts';
import { cfhReport, exportRequests, lockerReport } from '../reports/reports.ts';
import { deliveryPage } from '../webhooks/deliveries.ts';
import { deliveryView } from '../webhooks/views.ts';
import * as store from './store.ts';

export interface ConsolePageDeps {
  db: Db;
  clock: Clock;
  /** DEVICE_OFFLINE_SECONDS. */
  offlineSeconds: number;
  /** How many reports run at once (the reports API's too). */
  reportGate: ReportGate;
}

/** Requests the queue shows: every open one (up to a busy day's worth), then the newest closed ones. */
export const OPEN_SHOWN = 200;
export const CLOSED_SHOWN = 10;

export function locationsOf(deps: Pick<ConsolePageDeps, 'db'>, session: PersonActor): Promise<ReachedLocation[]> {
  return reachedLocations(deps.db, session);
}

/**
 * The location if the session may see it (else 404, whether it exists or not) and its role there
 * may do this (else 403): staff work; reports, webhooks and the audit log are an admin's.
 */
export async function visibleLocation(
  deps: Pick<ConsolePageDeps, 'db'>,
  session: PersonActor,
  locationId: number,
  ability: Ability = 'work',
): Promise<ReachedLocation> {
  const found = (await locationsOf(deps, session)).find((l) => l.id === locationId);
  if (found === undefined) throw notFound('location');
  if (!mayDo(session, ability, { organizationId: session.reach.organizationId, locationId })) throw forbidden(ability);
  return found;
}

const forbidden = (ability: Ability) =>
  new AppError(403, 'forbidden', ability === 'reports' ? "reports are for the location's administrators" : "this is for the location's administrators");

/** The live queue (the console's and the staff app's): C7's open and newest closed requests, each
 * with what staff read on it, and the location's outcomes for completing. */
export async function queuePage(deps: ConsolePageDeps, session: PersonActor, locationId: number) {
  await visibleLocation(deps, session, locationId);
  const now = deps.clock.now();
  const page = (state: 'open' | 'closed', limit: number) => listRequests(deps, session, { locationId, state, from: null, to: null, limit, cursor: null });
  const [open, closed, outcomes] = await Promise.all([page('open', OPEN_SHOWN), page('closed', CLOSED_SHOWN), store.outcomesOf(deps.db, locationId)]);
  const rows: RequestRow[] = [...open.requests, ...closed.requests];
  const labels = new Map(
    (
      await store.requestLabels(
        deps.db,
        locationId,
        rows.map((r) => r.id),
      )
    ).map((l) => [l.id, l]),
  );
  return {
    now: now.toISOString(),
    outcomes,
    requests: rows.map((r) => {
      const label = labels.get(r.id);
      return {
        ...toListedRecord(r),
        option_text: label?.option_text ?? '',
        option_prompt: label?.option_prompt ?? '',
        device_name: label?.device_name ?? null,
        custom_text: label?.custom_text ?? null,
        option_text_fr: label?.option_text_fr ?? '',
        option_prompt_fr: label?.option_prompt_fr ?? '',
        claimed_by_user_id: label?.claimed_by_user_id ?? null,
        require_scan: label?.require_scan ?? false,
        employee_arrived_at: label?.employee_arrived_at ?? null,
      };
    }),
  };
}

export async function lockersPage(deps: ConsolePageDeps, session: PersonActor, locationId: number) {
  await visibleLocation(deps, session, locationId);
  const now = deps.clock.now();
  const [cabinets, devices] = await Promise.all([store.lockerCabinets(deps.db, locationId, now), listDevices(deps, session, locationId)]);
  const lockers = new Map<
    number,
    { id: number; name: string; online: boolean; last_seen_at: string | null; rear_loading_available: boolean; cabinets: unknown[] }
  >();
  for (const c of cabinets) {
    let locker = lockers.get(c.locker_id);
    if (locker === undefined) {
      const device = devices.find((d) => d.kind === 'locker' && Number(d.id) === c.locker_id);
      locker = {
        id: c.locker_id,
        name: c.locker_name,
        online: device?.online ?? false,
        last_seen_at: device?.last_seen_at ?? null,
        rear_loading_available: c.rear_loading_available,
        cabinets: [],
      };
      lockers.set(c.locker_id, locker);
    }
    locker.cabinets.push({
      id: c.cabinet_id,
      key: c.key,
      name: c.name,
      door: c.state,
      rear_door: c.rear_load_status,
      enabled: c.enabled,
      occupied: c.occupied,
      size: c.size,
      thermal_mode: c.thermal_mode,
      cool_off: c.cool_off,
      cool_off_until: c.cool_off_until,
      order:
        c.order_id === null
          ? null
          : {
              id: c.order_id,
              order_id: c.order_ref,
              created_at: c.order_created_at,
              pickup_deadline: c.pickup_deadline,
              status: c.order_expired === true ? 'expired' : c.order_ready === true ? 'ready' : 'open',
            },
    });
  }
  return { now: now.toISOString(), lockers: [...lockers.values()] };
}

export async function devicesPage(deps: ConsolePageDeps, session: PersonActor, locationId: number) {
  await visibleLocation(deps, session, locationId);
  return { now: deps.clock.now().toISOString(), devices: (await listDevices(deps, session, locationId)).map(deviceView) };
}

/** Entries of each edge device's time line the radio page shows. */
export const RADIO_SHOWN = 50;

/** The location's edge devices, each with R3's time line: what it played and what it heard, newest first. */
export async function radioPage(deps: ConsolePageDeps, session: PersonActor, locationId: number) {
  await visibleLocation(deps, session, locationId);
  const edges = await store.edgesOf(deps.db, locationId);
  return {
    edges: await Promise.all(
      edges.map(async (e) => ({
        edge_id: e.edge_id,
        name: e.name,
        entries: (await radioTimeline(deps, session, { edge_id: e.edge_id, limit: RADIO_SHOWN })).entries.map((t) => ({
          kind: t.kind,
          id: t.id,
          at: t.at,
          text: t.text,
          status: t.status,
          actor: t.actor,
          speaker: t.speaker,
          source: t.source,
          priority: t.priority,
          intent: t.intent,
          duration_ms: t.duration_ms,
          has_audio: t.has_audio,
        })),
      })),
    ),
  };
}

/** The WAV of a message played on an edge device of a location the session may see. */
export async function playedAudio(deps: ConsolePageDeps, session: PersonActor, edgeId: string, messageId: string): Promise<Buffer> {
  await visibleEdge(deps, session, edgeId);
  try {
    return await playedWav(deps, session, messageId);
  } catch (err) {
    // A message of an edge device the session may not use is, to the console, one that is not there.
    if (err instanceof AppError && err.status === 403) throw notFound('message');
    throw err;
  }
}

/** An edge device of a location the session may see; else 404. */
export async function visibleEdge(deps: Pick<ConsolePageDeps, 'db'>, session: PersonActor, edgeId: string): Promise<void> {
  const locations = await locationsOf(deps, session);
  for (const l of locations) if ((await store.edgesOf(deps.db, l.id)).some((e) => e.edge_id === edgeId)) return;
  throw notFound('edge device');
}

export async function reportsPage(deps: ConsolePageDeps, session: PersonActor, query: { location_id: number; from: string; to: string }) {
  await visibleLocation(deps, session, query.location_id, 'reports');
  const [cfh, lockers, outcomes] = await Promise.all([
    cfhReport(deps, session, query),
    lockerReport(deps, session, query),
    store.outcomesOf(deps.db, query.location_id),
  ]);
  return { cfh, lockers, outcomes };
}

export async function requestsCsv(deps: ConsolePageDeps, session: PersonActor, query: { location_id: number; from: string; to: string }) {
  await visibleLocation(deps, session, query.location_id, 'reports');
  return exportRequests(deps, session, query);
}

/** The endpoints receiving the location's events, each with its newest deliveries (W1's view). */
export async function webhooksPage(deps: ConsolePageDeps, session: PersonActor, locationId: number) {
  await visibleLocation(deps, session, locationId, 'administer');
  const endpoints = await store.endpointsOf(deps.db, session, locationId);
  return {
    endpoints: await Promise.all(
      endpoints.map(async (e) => ({
        ...e,
        deliveries: (await deliveryPage(deps, session, e.id, { limit: 10 })).deliveries.map(deliveryView),
      })),
    ),
  };
}
