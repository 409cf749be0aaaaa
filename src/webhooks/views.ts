// The wire formats of W1 and W2: a delivery with its attempts (no URL, no secret), and the link to
// the next page of a listing.
import type { Static } from 'typebox';
import type { Delivery } from './schemas.ts';
import type { DeliveryPage } from './deliveries.ts';
import type { DeliveryRow } from './store.ts';

export function deliveryView(d: DeliveryRow): Static<typeof Delivery> {
  return {
    id: d.id,
    event_uuid: d.event_uuid,
    type: d.type as Static<typeof Delivery>['type'],
    status: d.status,
    state: d.state,
    created_at: d.created_at,
    next_attempt_at: d.next_attempt_at,
    attempts: d.attempts.map((a) => ({ at: a.at, status_code: a.status_code, duration_ms: a.duration_ms, error: a.error })),
  };
}

export const deliveryListView = (page: DeliveryPage): Static<typeof Delivery>[] => page.deliveries.map(deliveryView);

/** RFC 8288 `Link` to the next page, or null on the last one. */
export function nextPageLink(endpointId: number, limit: number, page: DeliveryPage): string | null {
  if (page.nextCursor === null) return null;
  return `</api/webhooks/${endpointId}/deliveries?limit=${limit}&cursor=${page.nextCursor}>; rel="next"`;
}
