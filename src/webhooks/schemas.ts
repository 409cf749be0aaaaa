// TypeBox schemas of W1 and W2: validation, the handlers' types and the OpenAPI document.
import { Type } from 'typebox';
import { EVENT_TYPES } from '../events/log.ts';
import { errorResponses, NullableTimestamp, nullable, oneOf, RowId, SERVICE_ERRORS, Timestamp } from '../http/schemas.ts';

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

const DeliveryId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'A delivery id (W1 lists them)' });

export const WEBHOOK_ERRORS = errorResponses({
  401: 'missing or invalid bearer token',
  403: 'the token lacks the webhooks scope',
  422: 'the path or query is invalid',
  ...SERVICE_ERRORS,
});

export const Attempt = Type.Object(
  {
    at: Timestamp,
    status_code: nullable(Type.Integer({ description: "The receiver's status; null when it never answered" })),
    duration_ms: Type.Integer(),
    error: nullable(
      Type.String({ description: 'Why the attempt failed when the status alone does not say (refused target, timeout, reset, redirect, body too large)' }),
    ),
  },
  { title: 'DeliveryAttempt' },
);

export const Delivery = Type.Object(
  {
    id: Type.Integer(),
    event_uuid: Type.String({ description: "The event's uuid (the payload's `uuid`, the `x-event-id` header)" }),
    type: oneOf(EVENT_TYPES),
    status: Type.String({ description: "The event's status" }),
    state: oneOf(DELIVERY_STATES, {
      description: 'pending: not delivered yet (retried with backoff for 24 hours); delivered: a 2xx answer; failed: retries ran out',
    }),
    created_at: Timestamp,
    next_attempt_at: NullableTimestamp,
    attempts: Type.Array(Attempt, { description: 'Oldest first (the newest 100)' }),
  },
  { title: 'WebhookDelivery' },
);

export const DeliveryList = Type.Array(Delivery, { description: 'Newest first' });

export const EndpointParams = Type.Object({ id: { ...RowId, description: 'The webhook endpoint id (from provisioning)' } });

export const DeliveriesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional({ ...DeliveryId, description: 'The id of the last delivery of the previous page (the `Link` header of a full page names it)' }),
});

export const DeliveryParams = Type.Object({ delivery_id: DeliveryId });
