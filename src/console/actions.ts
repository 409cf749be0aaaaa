// Staff actions from the console, each taken as the session's actor through the feature's own
// use case after checking that its object is in a location the session may see (else 404, and
// nothing changes): CFH claim, on the way and complete as `web_interface`; L3 open, close, disable
// and enable; L8 cancel; L9 a new open code; an announcement on an edge device (R1's path); W2.
import { mayDo, narrowedTo, type PersonActor } from '../access/actor.ts';
import { reachesLocation } from '../access/locations.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { claimRequest, completeRequest, markOnTheWay } from '../cfh/requests.ts';
import type { Staff } from '../cfh/rules.ts';
import type { StaffAction } from '../cfh/schemas.ts';
import { AppError, notFound } from '../http/errors.ts';
import { commandCabinet } from '../lockers/cabinets.ts';
import { cancelOrder, renewOpenCode } from '../lockers/lifecycle.ts';
import { orderStatus } from '../lockers/rules.ts';
import { playText } from '../radio/play.ts';
import type { SpeechSynthesizer } from '../radio/speech/speech.ts';
import { redeliverDelivery } from '../webhooks/deliveries.ts';
import { deliveryView } from '../webhooks/views.ts';
import { visibleEdge } from './pages.ts';
import * as store from './store.ts';

export interface ConsoleActionDeps {
  db: Db;
  clock: Clock;
  /** CFH_TIMEOUT_SECONDS. */
  timeoutSeconds: number;
  /** CFH_ESCALATION_SECONDS. */
  escalationSeconds: number;
  speech: SpeechSynthesizer;
  /** RADIO_MESSAGE_TTL_SECONDS and RADIO_QUEUE_LIMIT, as R1 plays with them. */
  ttlSeconds: number;
  queueLimit: number;
  observeSynthesis?: (seconds: number) => void;
}

async function mayAct(
  deps: Pick<ConsoleActionDeps, 'db'>,
  session: PersonActor,
  place: { organization_id: number; location_id: number } | undefined,
  what: string,
): Promise<{ organization_id: number; location_id: number }> {
  if (place === undefined || !mayDo(session, 'work', { organizationId: place.organization_id, locationId: place.location_id })) throw notFound(what);
  // The location row's own organization too, as the console's location list would show it.
  if (!(await reachesLocation(deps.db, session, place.location_id))) throw notFound(what);
  return place;
}

/** A person claims as themselves (section 17): their name, and their id as the user id. */
export const staffOf = (session: PersonActor): Staff => ({
  name: session.name,
  userId: `person:${session.personId}`,
  channelId: 'console',
  from: 'web_interface',
});

/** The steps staff take on a request in the console: C1, C2 and C3. */
export const CFH_STEPS = ['claim', 'on_the_way', 'complete'] as const;
export type CfhStep = (typeof CFH_STEPS)[number];

/** Which steps staff see, by the option's staff action (contract section 10); the queue page gets it
 * from values.ts. */
export const STEPS_BY_STAFF_ACTION: Readonly<Record<StaffAction, readonly CfhStep[]>> = {
  claim_and_on_the_way: ['claim', 'on_the_way', 'complete'],
  on_the_way: ['on_the_way', 'complete'],
  acknowledge: ['claim', 'complete'],
  done: ['complete'],
  none: [],
};

/** C1 / C2 / C3 from the console; `success` as the API answers it (false: the request moved on). */
export async function cfhStep(
  deps: ConsoleActionDeps,
  session: PersonActor,
  messageId: string,
  step: CfhStep,
  outcome: string | null,
): Promise<{ success: boolean }> {
  // The CFH use cases keep to the session's reach themselves (else 404).
  const staff = staffOf(session);
  if (step === 'claim') return { success: await claimRequest(deps, session, messageId, staff) };
  if (step === 'on_the_way') return { success: await markOnTheWay(deps, session, messageId, staff) };
  if (outcome === null || outcome.trim() === '') {
    throw new AppError(422, 'validation_failed', 'outcome: is required', { errors: { outcome: ['is required'] } });
  }
  return { success: await completeRequest(deps, session, messageId, staff, outcome.trim()) };
}

export type CabinetAction = 'open' | 'close' | 'disable' | 'enable';

/** L3 from the console: the front door (or the rear, when asked and the locker has one). */
export async function cabinetAction(
  deps: ConsoleActionDeps,
  session: PersonActor,
  cabinetId: number,
  action: CabinetAction,
  opts: { reason: string | null; rear: boolean },
) {
  await mayAct(deps, session, await store.cabinetPlace(deps.db, cabinetId), `cabinet ${cabinetId}`);
  return commandCabinet(deps, cabinetId, {
    command: action,
    reason: opts.reason,
    acted_by: session.personId,
    ...(action === 'open' || action === 'close' ? { rearload: opts.rear } : {}),
  });
}

/** L8 (cancel) or L9 (a new open code) from the console. */
export async function orderAction(deps: ConsoleActionDeps, session: PersonActor, id: number, action: 'cancel' | 'open_code') {
  const place = await mayAct(deps, session, await store.orderPlace(deps.db, id), `order ${id}`);
  const scope = { organization_id: place.organization_id, location_id: place.location_id };
  const order = action === 'cancel' ? await cancelOrder(deps, id, scope) : await renewOpenCode(deps, id, scope);
  return { id: order.id, order_id: order.order_id, open_code: order.open_code, status: orderStatus(order), pickup_deadline: order.pickup_deadline };
}

/** R1 from the console: text typed by staff, played on the edge device as a generic message. */
export async function announce(deps: ConsoleActionDeps, session: PersonActor, edgeId: string, text: string) {
  await visibleEdge(deps, session, edgeId);
  return playText(deps, session, { edgeId, text, actor: session.name, process: true });
}

/** W2 from the console. */
export async function redeliver(deps: ConsoleActionDeps, session: PersonActor, deliveryId: number) {
  const admin = narrowedTo(session, 'administer');
  if (admin === null) throw new AppError(403, 'forbidden', "webhooks are for the location's administrators");
  const row = await redeliverDelivery(deps, admin, deliveryId);
  return deliveryView(row);
}
