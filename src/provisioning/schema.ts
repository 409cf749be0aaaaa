// The declarative provisioning file (contract section 7).
import { Type, type Static } from 'typebox';
import { staffActionSchema } from '../cfh/schemas.ts';
import { EVENT_TYPES } from '../events/log.ts';
import { nullable, oneOf, oneOfOrNull, RowId, STORABLE } from '../http/schemas.ts';
import { THERMAL_MODES } from '../lockers/schemas.ts';
import { ROLES } from '../access/actor.ts';

/** What a token may do (contract section 2). */
export const TOKEN_SCOPES = ['cfh', 'radio', 'buttons', 'reports', 'devices', 'webhooks', 'admin', 'console'] as const;

const Id = RowId;

/** The CFH statuses a radio edge device can announce (contract sections 10 and 12). */
export const CFH_ANNOUNCEABLE = ['created', 'escalated', 'reminder', 'claimed', 'on_the_way', 'completed', 'timed_out', 'cancelled'] as const;
export const Name = Type.String({ minLength: 1, maxLength: 200 });
/** A key or token: at least 16 characters. */
export const Secret = Type.String({ minLength: 16, maxLength: 512 });

/** The chat channel a button's or display's requests go to (contract section 7, version 3): copied
 * to each request it creates (chat_channel_id, teams_channel_id). Absent or null: none. The same
 * limit as C0's chat_channel_id. */
const ChatChannelId = nullable(Type.String({ minLength: 1, maxLength: 200, ...STORABLE }));

/** A person's email: the address form, case kept, compared without case. */
export const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' });

/** A role over locations: org_admin over none (the whole organization), the others over some. */
export const RoleGrant = Type.Object({
  role: oneOf(ROLES),
  location_ids: Type.Optional(nullable(Type.Array(RowId, { minItems: 1, maxItems: 1000, uniqueItems: true }))),
});

/** A display's page address and credential: at least 128 random bits, URL-safe. */
export const DisplayKey = Type.String({ minLength: 22, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });

const CfhSeconds = Type.Integer({ minimum: 0, maximum: 604_800 });

/** One of the lockers' THERMAL_MODES (each a literal, as the refusals name them). */
export const ThermalMode = Type.Unsafe<(typeof THERMAL_MODES)[number]>(Type.Union(THERMAL_MODES.map((mode) => Type.Literal(mode))));

export const CabinetEntry = Type.Object({
  id: Id,
  key: Type.Integer({ minimum: 0, maximum: 100_000 }),
  name: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  thermal_mode: Type.Optional(ThermalMode),
  tag: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
  enabled: Type.Optional(Type.Boolean()),
});

/** Section 19: a request of it is completed from the console or the staff app only after the
 * associate scanned its scan code (which the service makes and shows once). */
const RequireScan = Type.Boolean({ description: 'scan to complete (contract section 19)' });

/** One entry of each kind that section 18 administers too: the admin operations' bodies are
 * built from these, so the file and administration validate a field alike. */
export const LocationEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  organization_id: Id,
  name: Name,
  cfh_timeout_seconds: Type.Optional(nullable(Type.Integer({ minimum: 1, maximum: 86_400 }))),
  /** Hours a locker order waits for its customer (default 72), and between pickup reminders (default 24). */
  locker_pickup_hours: Type.Optional(nullable(Type.Number({ exclusiveMinimum: 0, maximum: 8760 }))),
  locker_reminder_hours: Type.Optional(nullable(Type.Number({ exclusiveMinimum: 0, maximum: 8760 }))),
  /** The store's own number, as its events carry it (`store_number`). */
  store_number: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 50, ...STORABLE }))),
  /** The store's IANA time zone (e.g. America/Toronto): its reports' day boundaries. Absent or null: UTC. */
  time_zone: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_+/-]+$' }))),
  /** Call for Help (docs/cfh.md): escalation, reminders, automatic completion; 0 turns one off. */
  cfh_escalation_seconds: Type.Optional(nullable(CfhSeconds)),
  cfh_reminder_seconds: Type.Optional(nullable(CfhSeconds)),
  cfh_reminder_claimed_seconds: Type.Optional(nullable(CfhSeconds)),
  cfh_reminder_cap_seconds: Type.Optional(nullable(CfhSeconds)),
  cfh_auto_complete_seconds: Type.Optional(nullable(CfhSeconds)),
  staff_name_format: Type.Optional(oneOfOrNull(['full', 'first', 'generic'] as const)),
  call_button_cooldown_seconds: Type.Optional(nullable(CfhSeconds)),
  language: Type.Optional(oneOfOrNull(['en', 'fr'] as const)),
});

export const LockerEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  location_id: Id,
  name: Name,
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  rear_loading_available: Type.Optional(Type.Boolean()),
  timer: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  /** Absent: a new locker gets one made by the service (shown once); a known locker keeps its own. */
  api_key: Type.Optional(Secret),
  cabinets: Type.Optional(Type.Array(CabinetEntry)),
});

export const CfhOptionEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  organization_id: Id,
  location_id: Type.Optional(nullable(Id)),
  text_en: Name,
  text_fr: Name,
  prompt_en: Type.String({ maxLength: 2000 }),
  prompt_fr: Type.String({ maxLength: 2000 }),
  staff_action: Type.Optional(staffActionSchema()),
  require_scan: Type.Optional(RequireScan),
});

export const CfhOutcomeEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  location_id: Id,
  key: Type.String({ minLength: 1, maxLength: 100, ...STORABLE }),
  text_en: Name,
  text_fr: Name,
});

export const CallButtonEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  location_id: Id,
  name: Name,
  /** The button's MAC address, as its hub sends it (compared case-insensitively). */
  device_key: Type.String({ minLength: 1, maxLength: 64, ...STORABLE }),
  option_id: Id,
  chat_channel_id: Type.Optional(ChatChannelId),
  require_scan: Type.Optional(RequireScan),
});

export const DisplayEntry = Type.Object({
  id: Id,
  /** false: retired (section 18): kept with its history, out of service. Absent: as it is (new: true). */
  enabled: Type.Optional(Type.Boolean()),
  location_id: Id,
  name: Name,
  /** The page's address and credential. Absent: a new display gets one made by the service (shown
   * once); a known display keeps its own. */
  key: Type.Optional(DisplayKey),
  option_ids: Type.Array(Id, { minItems: 1, maxItems: 4, uniqueItems: true }),
  allow_custom_text: Type.Optional(Type.Boolean()),
  chat_channel_id: Type.Optional(ChatChannelId),
  require_scan: Type.Optional(RequireScan),
});

/** The formats of a webhook endpoint (contract section 20): signed JSON (section 11), a Slack
 * incoming webhook, a Teams Workflows webhook. */
export const WEBHOOK_FORMATS = ['signed', 'slack', 'teams'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** Retired (false): no longer reached by customers or devices, its history kept (section 18). Default true. */
const Enabled = Type.Boolean({ description: 'false retires it: nothing reaches it any more, its history is kept' });

// The entries below are shared by the provisioning file and section 18's bodies (one validation):
// the admin operations take these fields, with the secrets and ids the service makes optional.

/** An edge device's id, as its MQTT username and topics carry it. */
export const EdgeId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$', description: 'letters, digits, _ . - (at most 100)' });
export const EDGE_VOICE_HANDLERS = ['normalize', 'chime', 'transcript'] as const;

export const RadioEdgeEntry = Type.Object({
  edge_id: EdgeId,
  location_id: Id,
  name: Name,
  device_key: Secret,
  voice_handlers: Type.Optional(Type.Array(oneOf(EDGE_VOICE_HANDLERS), { uniqueItems: true })),
  /** The CFH statuses it announces (default created, escalated, cancelled); empty: none. */
  announce_cfh: Type.Optional(Type.Array(oneOf(CFH_ANNOUNCEABLE), { uniqueItems: true })),
  /** Acts on what staff say on the channel (radio/<edge_id>/heard). Default false. */
  voice_actions: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Enabled),
});

/** A messaging provider's account SID: 34 letters and digits. */
export const AccountSid = Type.String({
  pattern: '^[A-Za-z0-9]{34}$',
  description: "the provider's account SID (34 letters and digits)",
  examples: ['AC0123456789abcdef0123456789abcdef'],
});

export const MessagingAccountEntry = Type.Object({
  account_sid: AccountSid,
  organization_id: Id,
  auth_token: Secret,
  enabled: Type.Optional(Enabled),
});

export const WebhookEntry = Type.Object({
  id: Id,
  organization_id: Id,
  /** Only this location's events; absent or null: every location of the organization. */
  location_id: Type.Optional(nullable(Id)),
  /** http or https; checked when saved (webhooks/endpoint-rules.ts), the address again at each delivery. */
  url: Type.String({ minLength: 1, maxLength: 2000 }),
  /** signed (default), slack or teams (section 20). */
  format: Type.Optional(oneOf(WEBHOOK_FORMATS)),
  /** The HMAC-SHA256 key of the signatures (signed endpoints only: a Slack or Teams URL is its own secret). */
  // Any non-empty secret: receivers choose their own (the HMAC key), even short ones.
  secret: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  /** The event types sent; absent: all of them, empty: none. */
  events: Type.Optional(Type.Array(oneOf(EVENT_TYPES), { uniqueItems: true })),
  enabled: Type.Optional(Enabled),
});

export const ProvisioningFile = Type.Object({
  organizations: Type.Optional(Type.Array(Type.Object({ id: Id, name: Name }))),
  locations: Type.Optional(Type.Array(LocationEntry)),
  lockers: Type.Optional(Type.Array(LockerEntry)),
  cfh_options: Type.Optional(Type.Array(CfhOptionEntry)),
  cfh_outcomes: Type.Optional(Type.Array(CfhOutcomeEntry)),
  call_buttons: Type.Optional(Type.Array(CallButtonEntry)),
  cfh_displays: Type.Optional(Type.Array(DisplayEntry)),
  radio_edges: Type.Optional(Type.Array(RadioEdgeEntry)),
  messaging_accounts: Type.Optional(Type.Array(MessagingAccountEntry)),
  webhooks: Type.Optional(Type.Array(WebhookEntry)),
  api_tokens: Type.Optional(
    Type.Array(
      Type.Object({
        name: Name,
        organization_id: Id,
        scopes: Type.Array(oneOf(TOKEN_SCOPES), { minItems: 1, uniqueItems: true }),
        /** The locations the token may reach; absent or null: every location of its organization. */
        location_ids: Type.Optional(nullable(Type.Array(Id, { minItems: 1, uniqueItems: true }))),
        token: Secret,
        expires_at: Type.Optional(nullable(Type.String({ format: 'date-time' }))),
        revoked: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  /** People (section 17): never a password or a PIN, which are set by the person or an administrator. */
  people: Type.Optional(
    Type.Array(
      Type.Object({
        email: Email,
        name: Name,
        organization_id: Id,
        status: Type.Optional(oneOf(['active', 'disabled'] as const)),
        language: Type.Optional(nullable(oneOf(['en', 'fr'] as const))),
        memberships: Type.Array(RoleGrant, { maxItems: 50 }),
      }),
    ),
  ),
  sso_role_mappings: Type.Optional(
    Type.Array(
      Type.Object({
        claim_value: Type.String({ minLength: 1, maxLength: 500, ...STORABLE }),
        organization_id: Id,
        ...RoleGrant.properties,
      }),
    ),
  ),
});

export type ProvisioningFile = Static<typeof ProvisioningFile>;
