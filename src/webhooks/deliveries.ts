// W1 and W2: an endpoint's deliveries with every attempt, and a delivery sent again. An actor sees
// the endpoints within its reach (access/): an actor limited to some locations sees only endpoints
// of those, since an organization-wide endpoint gets other locations' events. Anything else is
// not found, so existence is not leaked.
import type { OrganizationActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { AppError } from '../http/errors.ts';
import { listDeliveries, readableEndpoint, redeliver, type DeliveryRow } from './store.ts';

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
}

export interface DeliveryPage {
  deliveries: DeliveryRow[];
  /** The `cursor` of the next page; null on the last one. */
  nextCursor: number | null;
}

/** W1: a page of the endpoint's deliveries, newest first; `cursor` is the last id of the previous page. */
export async function deliveryPage(
  deps: DeliveryDeps,
  actor: OrganizationActor,
  endpointId: number,
  page: { limit: number; cursor?: number | undefined },
): Promise<DeliveryPage> {
  if (!(await readableEndpoint(deps.db, endpointId, actor))) {
    throw new AppError(404, 'not_found', 'webhook endpoint not found');
  }
  const deliveries = await listDeliveries(deps.db, endpointId, page.limit, page.cursor ?? null);
  return { deliveries, nextCursor: deliveries.length === page.limit ? (deliveries.at(-1)?.id ?? null) : null };
}

/** W2: the delivery pending again and due now (with 24 hours of retries from now). */
export async function redeliverDelivery(deps: DeliveryDeps, actor: OrganizationActor, deliveryId: number): Promise<DeliveryRow> {
  const row = await deps.db.statement((q) => redeliver(q, deliveryId, actor, deps.clock.now()));
  if (row === null) throw new AppError(404, 'not_found', 'webhook delivery not found');
  return row;
}
