// TypeBox of section 18's radio edge devices and messaging accounts: the provisioning file's entries
// (provisioning/schema.ts RadioEdgeEntry, MessagingAccountEntry: one validation) with the ids and
// keys the service makes optional, plus enabled, version and managed_by.
import { Type, type Static } from 'typebox';
import { ManagedBy, Version } from '../../admin/schemas.ts';
import { RowId, Timestamp } from '../../http/schemas.ts';
import { MessagingAccountEntry, RadioEdgeEntry } from '../../provisioning/schema.ts';

const edge = RadioEdgeEntry.properties;
const account = MessagingAccountEntry.properties;

export const NewRadioEdge = Type.Object(
  {
    edge_id: Type.Optional(Type.String({ ...edge.edge_id, description: 'made by the service when not given (edge-<12 hex digits>)' })),
    location_id: edge.location_id,
    name: edge.name,
    device_key: Type.Optional(
      Type.String({ minLength: 16, maxLength: 512, description: 'its MQTT password and api-key; made by the service when not given, answered once' }),
    ),
    voice_handlers: edge.voice_handlers,
    announce_cfh: edge.announce_cfh,
    voice_actions: edge.voice_actions,
    enabled: edge.enabled,
  },
  { $id: 'NewRadioEdge', additionalProperties: false },
);
export type NewRadioEdge = Static<typeof NewRadioEdge>;

export const RadioEdgeChange = Type.Object(
  {
    location_id: Type.Optional(edge.location_id),
    name: Type.Optional(edge.name),
    voice_handlers: edge.voice_handlers,
    announce_cfh: edge.announce_cfh,
    voice_actions: edge.voice_actions,
    enabled: edge.enabled,
    version: Type.Optional(Version),
  },
  { $id: 'RadioEdgeChange', additionalProperties: false },
);
export type RadioEdgeChange = Static<typeof RadioEdgeChange>;

const edgeFields = {
  edge_id: Type.String(),
  organization_id: RowId,
  location_id: RowId,
  name: Type.String(),
  voice_handlers: Type.Array(Type.String()),
  announce_cfh: Type.Array(Type.String()),
  voice_actions: Type.Boolean(),
  enabled: Type.Boolean(),
  version: Version,
  managed_by: ManagedBy,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const RadioEdgeView = Type.Object(edgeFields, { $id: 'RadioEdge' });

export const RadioEdgeWithKey = Type.Object(
  { ...edgeFields, device_key: Type.String({ description: 'the device key, in this answer only' }) },
  { $id: 'RadioEdgeWithKey' },
);

export const EdgeParams = Type.Object({ edge_id: edge.edge_id });

export const NewMessagingAccount = Type.Object(
  {
    account_sid: account.account_sid,
    organization_id: Type.Optional(account.organization_id),
    auth_token: Type.String({ minLength: 16, maxLength: 512, description: "the provider's auth token (the key of its signatures); never shown again" }),
    enabled: account.enabled,
  },
  { $id: 'NewMessagingAccount', additionalProperties: false },
);
export type NewMessagingAccount = Static<typeof NewMessagingAccount>;

export const MessagingAccountChange = Type.Object(
  {
    auth_token: Type.Optional(Type.String({ minLength: 16, maxLength: 512, description: 'a new auth token (the provider rotated it); never shown again' })),
    enabled: account.enabled,
    version: Type.Optional(Version),
  },
  { $id: 'MessagingAccountChange', additionalProperties: false },
);
export type MessagingAccountChange = Static<typeof MessagingAccountChange>;

export const MessagingAccountView = Type.Object(
  {
    account_sid: Type.String(),
    organization_id: RowId,
    enabled: Type.Boolean(),
    version: Version,
    managed_by: ManagedBy,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'MessagingAccount' },
);

export const AccountParams = Type.Object({ account_sid: account.account_sid });

export const RotateQuery = Type.Object({ version: Type.Optional(Version) });
