// Writing events straight into the log, for the tests of what reads it (subscribers, live streams,
// the webhooks' breaker): the service writes its events with its changes (insertEventsFrom).
import type { Tx } from '../../src/db/db.ts';
import { insertEventsFrom, type NewEvent } from '../../src/events/log.ts';

/** Records events in one statement of the caller's transaction (which then signals `events`). */
export async function recordEvents(q: Tx, events: readonly NewEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  await q.query(
    insertEventsFrom(q, `SELECT * , $8::timestamptz FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::jsonb[], $7::text[])`),
    [
      events.map((e) => e.type),
      events.map((e) => e.status),
      events.map((e) => e.organizationId),
      events.map((e) => e.locationId),
      events.map((e) => (e.internalId === null ? null : String(e.internalId))),
      events.map((e) => JSON.stringify(e.details)),
      events.map((e) => e.message ?? null),
      now,
    ],
  );
}
