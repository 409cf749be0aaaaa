// The event log's "webhooks" subscriber: for each batch of committed events, a delivery for every
// endpoint that takes them, written in the transaction that moves the subscriber's cursor, so each
// event's deliveries are written exactly once. Its commit wakes the deliverer (deliverer.ts).
import type { Clock } from '../clock.ts';
import type { EventHandler } from '../events/subscribers.ts';
import { insertDeliveries } from './store.ts';

/** The subscriber's name: its cursor row (migration 008 starts it where the log was then). */
export const WEBHOOKS_SUBSCRIBER = 'webhooks';

export function webhookFanOut(deps: { clock: Clock }): EventHandler {
  return async (q, events) => {
    await insertDeliveries(q, events, deps.clock.now());
  };
}
