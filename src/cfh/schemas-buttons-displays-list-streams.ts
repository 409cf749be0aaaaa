// Wire shapes of Call for Help version 2 (contract section 9): call buttons (B1, B2), displays
// (C9), the location's listing (C7) and the live streams (C6, C8).
import { Type, type Static } from 'typebox';
import { oneOf, RowId, StorableText } from '../http/schemas.ts';
import { UPDATE_TYPES } from './buttons.ts';
import { CfhRequestRecord, MessageId, staffActionSchema } from './schemas.ts';

const DeviceKey = StorableText({ minLength: 1, maxLength: 64, description: "the button's MAC address (any case)" });

// Hubs that post forms send numbers as text: a number or its decimal text is accepted.
export const PressBody = Type.Object(
  {
    device_key: DeviceKey,
    voltage: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.String({ pattern: '^\\s*[0-9]{1,2}(\\.[0-9]{1,6})?\\s*$' })], {
        description: 'battery voltage (a number, or its decimal text); below 2.4 V the button reports battery_low',
      }),
    ),
    button: Type.Optional(
      Type.Union([Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }), Type.String({ pattern: '^\\s*-?[0-9]{1,9}\\s*$' })], {
        description: 'absent or not 0: a press; 0: no press (a voltage report)',
      }),
    ),
  },
  { title: 'CallButtonPress' },
);
export type PressBody = Static<typeof PressBody>;

export const PressAnswer = {
  description: 'text/plain: the new request\'s message_id, or "Voltage updated successfully", or "Button value is 0, no action taken"',
  content: { 'text/plain': { schema: Type.String({ title: 'CallButtonAnswer' }) } },
};

export const ButtonUpdateParams = Type.Object({ message_id: MessageId });

export const ButtonUpdateBody = Type.Object(
  {
    device_key: DeviceKey,
    update_type: oneOf(UPDATE_TYPES),
    reason: Type.Optional(StorableText({ minLength: 1, maxLength: 200, description: 'required for completed: the completion_reason' })),
  },
  { title: 'CallButtonUpdate' },
);
export type ButtonUpdateBody = Static<typeof ButtonUpdateBody>;

export const ButtonRecord = Type.Object(
  {
    ...CfhRequestRecord.properties,
    employee_has_arrived: Type.Boolean({ description: 'mirrors is_on_the_way' }),
    employee_arrived_at: Type.Union([Type.String(), Type.Null()], { description: 'mirrors staff_on_the_way_at' }),
  },
  { title: 'CallButtonRequestRecord' },
);

export const ButtonUpdateAnswer = Type.Object(
  {
    message: Type.String({ description: 'Success' }),
    data: ButtonRecord,
  },
  { title: 'CallButtonUpdateAnswer' },
);

export const DisplayParams = Type.Object({ display_key: Type.String({ minLength: 1, maxLength: 200, description: "the display's key (its QR code's)" }) });

export const DisplayRequestBody = Type.Object(
  {
    option_id: Type.Optional(RowId),
    custom_text: Type.Optional(
      StorableText({ minLength: 1, maxLength: 200, description: 'when the display allows it; refused when the profanity filter flags it' }),
    ),
    browser_id: Type.Optional(
      Type.String({
        minLength: 22,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]*$',
        description:
          "the customer's browser: an id its page keeps (at least 128 random bits, base64url). The cooldown is this browser's, and " +
          'its request still open is answered again (200). Without it the client is the address (IPv6: its /64).',
      }),
    ),
  },
  { title: 'DisplayRequest' },
);
export type DisplayRequestBody = Static<typeof DisplayRequestBody>;

export const ListQuery = Type.Object({
  location_id: RowId,
  state: Type.Optional(oneOf(['open', 'closed', 'all'] as const, { description: 'open (the default): not closed; closed; all' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (inclusive)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created before (exclusive)' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional({ ...RowId, description: 'the id of the last request of the previous page (a full page names it in its Link header)' }),
});
export type ListQuery = Static<typeof ListQuery>;

export const ListedRecord = Type.Object(
  {
    ...CfhRequestRecord.properties,
    staff_action: staffActionSchema(),
  },
  { title: 'CfhListedRequest' },
);

export const RequestList = Type.Array(ListedRecord, { description: 'newest first', title: 'CfhRequestList' });

export const StreamQuery = Type.Object({ location_id: RowId });
export const TrackingStreamQuery = Type.Object({ message_id: MessageId });

/** An SSE response, documented with its content type. */
export const eventStream = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events' }) } },
});
