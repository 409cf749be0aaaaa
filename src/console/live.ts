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

/** The tag of a session's streams, ended at sign-out. */
export const sessionTag = (sessionId: number): string => `console-session:${sessionId}`;

/**
 * The stream of a location for a session; it lives only as long as the session: ended at once when
 * the session signs out on this instance, and at the next batch or heartbeat once `sessionLive`
 * says the session ended elsewhere or went idle.
 */
export function openConsoleStream(
  live: LiveStreams,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { locationId: number; sessionId: number; sessionLive: () => Promise<boolean> },
): Promise<void> {
  const { locationId } = opts;
  return live.open(request, reply, {
    locationId,
    tag: sessionTag(opts.sessionId),
    stillAllowed: opts.sessionLive,
    initial: async (sink) => void sink.send('ready', { location_id: locationId }),
    onEvents: async (events, sink) => void sink.send('change', changeNotice(events)),
  });
}
