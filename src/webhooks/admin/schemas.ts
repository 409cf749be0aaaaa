// TypeBox of section 18's webhook endpoints: the provisioning file's entry (provisioning/schema.ts
// WebhookEntry, one validation) with the id, the organization and the secret made optional, plus
// enabled, version and managed_by; and what testWebhook answers.
import { Type, type Static } from 'typebox';
import { ManagedBy, Version } from '../../admin/schemas.ts';
import { EVENT_TYPES } from '../../events/log.ts';
import { nullable, oneOf, RowId, Timestamp } from '../../http/schemas.ts';
import { WEBHOOK_FORMATS, WebhookEntry } from '../../provisioning/schema.ts';

const entry = WebhookEntry.properties;

export const NewWebhook = Type.Object(
  {
    id: Type.Optional(entry.id),
    organization_id: Type.Optional(entry.organization_id),
    location_id: entry.location_id,
    url: entry.url,
    format: entry.format,
    secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: "a signed endpoint's HMAC key; made by the service when not given (answered once, as `secret`). Not for slack or teams.",
      }),
    ),
    events: entry.events,
    enabled: entry.enabled,
  },
  { $id: 'NewWebhook', additionalProperties: false },
);
export type NewWebhook = Static<typeof NewWebhook>;

export const WebhookChange = Type.Object(
  {
    location_id: entry.location_id,
    url: Type.Optional(Type.String({ ...entry.url, description: 'a new URL; the masked URL as shown is taken as unchanged' })),
    format: entry.format,
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: "a signed endpoint's new HMAC key (never shown again)" })),
    events: entry.events,
    enabled: entry.enabled,
    version: Type.Optional(Version),
  },
  { $id: 'WebhookChange', additionalProperties: false },
);
export type WebhookChange = Static<typeof WebhookChange>;

const webhookFields = {
  id: RowId,
  organization_id: RowId,
  location_id: nullable(RowId),
  url: Type.String({ description: "a signed endpoint's URL; a slack or teams URL is its secret and shows as its origin and last 4 characters" }),
  format: oneOf(WEBHOOK_FORMATS),
  events: Type.Array(oneOf(EVENT_TYPES)),
  enabled: Type.Boolean(),
  version: Version,
  managed_by: ManagedBy,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookView = Type.Object(webhookFields, { $id: 'Webhook' });

export const CreatedWebhook = Type.Object(
  { ...webhookFields, secret: Type.Optional(Type.String({ description: "a signed endpoint's secret, in this answer only" })) },
  { $id: 'CreatedWebhook' },
);

export const WebhookTestResult = Type.Object(
  {
    delivered: Type.Boolean({ description: 'a 2xx answer within 10 s, as a delivery counts it' }),
    status_code: nullable(Type.Integer({ description: "the receiver's status; null when it never answered" })),
    duration_ms: Type.Integer({ minimum: 0 }),
    body_excerpt: nullable(Type.String({ description: "the first 500 bytes of the receiver's answer" })),
    error: nullable(Type.String({ description: 'why it was not delivered, when the status alone does not say (a refused address, a timeout)' })),
  },
  { $id: 'WebhookTestResult' },
);
