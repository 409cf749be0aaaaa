// The live status of Call for Help (contract section 9): C6, one request's status view, and C8, a
// location's requests, as Server-Sent Events over the live feed (src/live), which hears the event
// log of every instance. A stream sends the state again after each committed CFH event of its
// request (C6) or location (C8), read after the commit, so it shows what the change left. The C8
// streams of a location read each batch's records once between them.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, OrganizationActor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import type { EventRow } from '../events/log.ts';
import type { LiveStreams, SseSink } from '../live/streams.ts';
import { checkLocation } from './list.ts';
import { requestOfLocation } from './list-store.ts';
import { requestStatus } from './requests.ts';
import { toListedRecord, toStatusView } from './views.ts';

export interface StreamDeps {
  db: Queryable;
  live: LiveStreams;
}

/** How long a client of a closed request's stream is asked to wait before it reconnects. */
const CLOSED_RETRY_MS = 3_600_000;

const cfhEventsOf = (events: readonly EventRow[]) => events.filter((e) => e.type === 'callforhelp' && e.internal_id !== null);

/**
 * C6: a `status` event with the status view at once and after every change of the request. A
 * customer (no token) sees the claimer's name in the location's staff_name_format. An unknown
 * message_id is a 404 before the stream opens.
 */
export async function streamRequest(deps: StreamDeps, request: FastifyRequest, reply: FastifyReply, actor: Actor, messageId: string): Promise<void> {
  const first = await requestStatus(deps, actor, messageId);
  const viewer = actor.kind === 'customer' ? 'customer' : 'staff';
  const requestId = String(first.request_id);
  const send = async (sink: SseSink) => {
    const view = toStatusView(await requestStatus(deps, actor, messageId), viewer);
    sink.send('status', view);
    // A closed request changes no more: a customer's stream ends (and its page is asked not to come
    // back soon), so the capability streams' room is not held for nothing. An integration's stream
    // (a token) stays, as the contract describes C6, until it closes it.
    if (viewer === 'customer' && view.cfh_request.is_closed) sink.finish(CLOSED_RETRY_MS);
  };
  await deps.live.open(request, reply, {
    locationId: first.location_id,
    ...(actor.kind === 'customer' ? { capability: messageId } : {}),
    initial: send,
    onEvents: async (events, sink) => {
      if (cfhEventsOf(events).some((e) => e.internal_id === requestId)) await send(sink);
    },
  });
}

/** The records of a batch's CFH events, read after its commit, in commit order. */
async function recordsOf(db: Queryable, locationId: number, events: readonly EventRow[]): Promise<ReturnType<typeof toListedRecord>[]> {
  const records: ReturnType<typeof toListedRecord>[] = [];
  for (const event of cfhEventsOf(events)) {
    const row = await requestOfLocation(db, locationId, Number(event.internal_id));
    if (row !== null) records.push(toListedRecord(row));
  }
  return records;
}

/**
 * C8: an event `request` with the request record (and its option's staff_action) for every
 * committed CFH event of the location, in commit order. A location outside the actor's reach
 * is a 404 before the stream opens.
 */
export async function streamLocation(
  deps: StreamDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  actor: OrganizationActor,
  locationId: number,
): Promise<void> {
  await checkLocation(deps.db, actor, locationId);
  await deps.live.open(request, reply, {
    locationId,
    onEvents: async (events, sink) => {
      // The streams of the location read the records once per batch, all of them (not once each).
      const records = await deps.live.shared(events, `cfh-location-records:${locationId}`, () => recordsOf(deps.db, locationId, events));
      for (const record of records) sink.send('request', record);
    },
  });
}
