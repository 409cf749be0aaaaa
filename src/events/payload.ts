// An event as receivers get it (contract section 11): the Call for Help form that deployed
// receivers parse, the same shape for every type. Webhooks send it; anything else that shows
// events outside the service (live streams, the console) can too.
import type { EventRow, EventType } from './log.ts';

export interface EventPayload {
  /** Receivers deduplicate by it; also the `x-event-id` header. */
  uuid: string;
  type: EventType;
  status: string;
  created_at: string;
  details: Record<string, unknown>;
  internal_location_id: number | null;
  /** The changed thing's id: a number for a CFH request, an order or a cabinet; a radio message_id as text. */
  internal_id: number | string | null;
  store_number: string | null;
  organization_id: number;
  message: string | null;
}

/** Ids stored as text that are row numbers go out as numbers, as deployed receivers read them. */
function internalId(value: string | null): number | string | null {
  if (value === null || !/^(0|[1-9][0-9]{0,15})$/.test(value)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

/** The payload of an event; `storeNumber` is its location's `store_number`. */
export function eventPayload(
  event: Pick<EventRow, 'uuid' | 'type' | 'status' | 'created_at' | 'details' | 'location_id' | 'internal_id' | 'organization_id' | 'message'>,
  storeNumber: string | null,
): EventPayload {
  return {
    uuid: event.uuid,
    type: event.type,
    status: event.status,
    created_at: event.created_at,
    details: event.details,
    internal_location_id: event.location_id,
    internal_id: internalId(event.internal_id),
    store_number: storeNumber,
    organization_id: event.organization_id,
    message: event.message,
  };
}
