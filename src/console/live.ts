// The console's live stream of a location (src/live): after `ready`, a `change` event per batch of
// the location's committed events, naming the kinds that changed (callforhelp, locker, radio,
// device) and, for each, the statuses; a page reads its data again when a kind it shows changed,
// so what it shows is always a consistent read rather than patches that could drift. Events carry
// nothing the page does not then read with the session's own rights.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventRow } from '../events/log.ts';
import type { LiveStreams } from '../live/streams.ts';

export function changeNotice(events: readonly EventRow[]): { kinds: string[]; statuses: string[] } {
  return { kinds: [...new Set(events.map((e) => e.type))].sort(), statuses: [...new Set(events.map((e) => `${e.type}:${e.status}`))].sort() };
}

export function openConsoleStream(live: LiveStreams, request: FastifyRequest, reply: FastifyReply, locationId: number): Promise<void> {
  return live.open(request, reply, {
    locationId,
    initial: async (sink) => void sink.send('ready', { location_id: locationId }),
    onEvents: async (events, sink) => void sink.send('change', changeNotice(events)),
  });
}
