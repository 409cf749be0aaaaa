// Wire shapes of Call for Help (seed "CFH request", "CFH status view", "CFH option"). Response
// schemas are exact, so Fastify serializes them with a compiled serializer and nothing extra leaks.
import { Type, type Static } from 'typebox';
import { Flag01, INT32_MAX, nullable, NullableTimestamp, oneOf, RowId, SqlSeconds, StorableText, Timestamp } from '../http/schemas.ts';

export const REQUEST_FROM = ['provider_a', 'provider_b', 'provider_c', 'web_interface', 'radio', 'call_button'] as const;
export type RequestFrom = (typeof REQUEST_FROM)[number];
/** Deployed chat integrations' own words for the providers. */
export const REQUEST_FROM_ALIASES = { microsoft: 'provider_a', ringcentral: 'provider_b', bluefletch: 'provider_c' } as const satisfies Record<
  string,
  RequestFrom
>;
const ACCEPTED_REQUEST_FROM = [...REQUEST_FROM, ...Object.keys(REQUEST_FROM_ALIASES)] as (RequestFrom | keyof typeof REQUEST_FROM_ALIASES)[];

/** The provider a request_from names (an alias is its provider). */
export function requestFromOf(value: string | undefined): RequestFrom {
  if (value === undefined) return 'provider_a';
  return (REQUEST_FROM_ALIASES as Record<string, RequestFrom>)[value] ?? (value as RequestFrom);
}

export const STATUSES = ['created', 'escalated', 'claimed', 'on_the_way', 'completed', 'timed_out', 'cancelled'] as const;
export const SOURCES = ['api', 'call_button', 'display'] as const;
/** What staff do with an option's requests (contract section 10): the one list (the migration's
 * CHECK aside), with the schema of a value and its type built from it. */
export const STAFF_ACTIONS = ['claim_and_on_the_way', 'on_the_way', 'acknowledge', 'done', 'none'] as const;
export type StaffAction = (typeof STAFF_ACTIONS)[number];
export const staffActionSchema = () => oneOf(STAFF_ACTIONS);
/** An option's staff action when none is set (the column's default). */
export const DEFAULT_STAFF_ACTION: StaffAction = 'claim_and_on_the_way';

const OptionalId = Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: INT32_MAX })));
const NullableSqlSeconds = nullable(SqlSeconds);

// --- requests ---

export const CreateBody = Type.Object({
  location_id: RowId,
  option_id: RowId,
  device_id: OptionalId,
  display_id: OptionalId,
  callbutton_id: OptionalId,
  chat_channel_id: Type.Optional(nullable(StorableText({ minLength: 1, maxLength: 200 }))),
});
export type CreateBody = Static<typeof CreateBody>;

export const MessageId = StorableText({ minLength: 1, maxLength: 64, description: 'the request, as C0 returned it' });

const StaffAction = {
  message_id: MessageId,
  channel_id: StorableText({ minLength: 1, maxLength: 200, description: 'the channel id at the provider' }),
  claimed_by: StorableText({ minLength: 1, maxLength: 200, description: 'name of the employee' }),
  claimed_by_user_id: StorableText({ minLength: 1, maxLength: 200, description: 'the user id at the provider' }),
  request_from: Type.Optional(
    oneOf(ACCEPTED_REQUEST_FROM, {
      description:
        'provider_a (default), provider_b, provider_c, web_interface, radio, call_button; microsoft, ringcentral and bluefletch are provider_a, _b and _c',
    }),
  ),
};

export const StaffActionBody = Type.Object(StaffAction);
export type StaffActionBody = Static<typeof StaffActionBody>;

export const CompleteBody = Type.Object({
  ...StaffAction,
  customer_status: StorableText({ minLength: 1, maxLength: 200, description: 'how the employee completed the request, e.g. not_interested' }),
});
export type CompleteBody = Static<typeof CompleteBody>;

export const CancelBody = Type.Object({ message_id: MessageId });
export type CancelBody = Static<typeof CancelBody>;

export const TrackingQuery = Type.Object({ message_id: MessageId });
export type TrackingQuery = Static<typeof TrackingQuery>;

// --- responses ---

export const Success = Type.Object({ success: Type.Boolean() }, { title: 'CfhStepResult' });

/** The version 2 fields of the record and of the status view's cfh_request. */
const V2_FIELDS = {
  status: oneOf(STATUSES),
  is_escalated: Type.Boolean(),
  escalated_at: NullableTimestamp,
  source: oneOf(SOURCES),
  teams_channel_id: nullable(Type.String({ description: 'the same value as chat_channel_id' })),
};

export const CfhRequestRecord = Type.Object(
  {
    id: Type.Integer(),
    device_id: nullable(Type.Integer()),
    is_claimed: Type.Boolean(),
    claimed_at: NullableTimestamp,
    claimed_by: nullable(Type.String()),
    organization_id: Type.Integer(),
    location_id: Type.Integer(),
    option_id: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
    chat_channel_id: nullable(Type.String()),
    message_id: Type.String(),
    is_timeout: Type.Boolean(),
    timeout_at: NullableTimestamp,
    is_closed: Type.Boolean(),
    closed_at: NullableSqlSeconds,
    is_on_the_way: Type.Boolean(),
    staff_on_the_way_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    is_completed: Flag01,
    completion_reason: nullable(Type.String()),
    is_canceled: Type.Boolean(),
    customer_canceled_at: NullableSqlSeconds,
    display_id: nullable(Type.Integer()),
    callbutton_id: nullable(Type.Integer()),
    ...V2_FIELDS,
  },
  { title: 'CfhRequestRecord' },
);
export type CfhRequestRecord = Static<typeof CfhRequestRecord>;

export const CfhOption = Type.Object(
  {
    id: Type.Integer(),
    text_en: Type.String(),
    text_fr: Type.String(),
    prompt_en: Type.String(),
    prompt_fr: Type.String(),
    organization_id: Type.Integer(),
    location_id: nullable(Type.Integer()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'CfhOption' },
);
export type CfhOption = Static<typeof CfhOption>;

export const CfhStatusView = Type.Object(
  {
    device_id: nullable(Type.Integer()),
    option: CfhOption,
    location_id: Type.Integer(),
    message_id: nullable(Type.String()),
    cfh_request: Type.Object({
      option_id: Type.Integer(),
      is_claimed: Type.Boolean(),
      claimed_at: NullableTimestamp,
      claimed_by: nullable(Type.String()),
      location_id: Type.Integer(),
      organization_id: Type.Integer(),
      created_at: Timestamp,
      updated_at: Timestamp,
      is_timeout: Type.Boolean(),
      timeout_at: NullableTimestamp,
      is_closed: Type.Boolean(),
      closed_at: NullableSqlSeconds,
      is_on_the_way: Type.Boolean(),
      staff_on_the_way_at: NullableTimestamp,
      is_canceled: Type.Boolean(),
      customer_canceled_at: NullableSqlSeconds,
      employee_has_arrived: Type.Boolean({ description: 'mirrors is_on_the_way' }),
      employee_arrived_at: nullable(
        Type.String({ description: 'mirrors staff_on_the_way_at; for a request that must be scanned (section 19), the time of its right scan' }),
      ),
      ...V2_FIELDS,
    }),
    show_survey: Type.Boolean({ description: 'true once the request is completed' }),
  },
  { title: 'CfhStatusView' },
);
export type CfhStatusView = Static<typeof CfhStatusView>;
