// TypeBox of the audit log's operations: the entry (contract section 17), a page of them, and the
// filters both operations take.
import { Type } from 'typebox';
import { errorResponse, errorResponses, INT32_MAX, nullable, oneOf, SERVICE_ERRORS } from '../http/schemas.ts';

const TIME = 'a date (YYYY-MM-DD, its whole UTC day) or a date-time with its zone (e.g. 2026-01-15T09:00:00Z)';

const filters = {
  location_id: Type.Optional(Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "only this location's entries (one the caller administers)" })),
  from: Type.Optional(Type.String({ maxLength: 40, description: `entries at or after: ${TIME}` })),
  to: Type.Optional(Type.String({ maxLength: 40, description: `entries at or before: ${TIME}` })),
  action: Type.Optional(
    Type.String({
      maxLength: 100,
      pattern: '^[a-z_]+(\\.[a-z_]+)*$',
      description: 'an action (`person.created`), or a family of them (`person` finds `person` and every `person.<...>`)',
    }),
  ),
};

export const AuditExportQuery = Type.Object(filters, { title: 'AuditExportQuery' });

export const AuditListQuery = Type.Object(
  {
    ...filters,
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
  },
  { title: 'AuditListQuery' },
);

const Change = Type.Object({ from: Type.Unknown(), to: Type.Unknown() });

export const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String({ description: 'UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ' }),
    actor: Type.Object({
      type: oneOf(['person', 'service_account', 'provisioning', 'system']),
      id: nullable(Type.String({ description: "the person's or service account's id (as text); null for provisioning and the system" })),
      name: nullable(Type.String({ description: 'their name then; provisioning: the file applied; a failed sign-in of an unknown email: the email typed' })),
    }),
    action: Type.String({ description: 'a stable word: person.created, membership.granted, token.revoked, store_device.enrolled, sign_in.failed...' }),
    target: nullable(
      Type.Object(
        {
          type: Type.String({ description: 'person, session, store_device, call_button, location...' }),
          id: nullable(Type.String({ description: 'its id (as text)' })),
          name: nullable(Type.String()),
        },
        { description: 'what the action was done to; null when nothing in particular (a sign-in)' },
      ),
    ),
    organization_id: nullable(Type.Integer()),
    location_id: nullable(Type.Integer({ description: 'null: organization-wide' })),
    changes: Type.Record(Type.String(), Change, { description: 'field: { from, to }; a secret shows "[secret]"' }),
    ip: nullable(Type.String()),
    user_agent: nullable(Type.String()),
  },
  {
    title: 'AuditEntry',
    examples: [
      {
        id: 4211,
        at: '2026-01-15T09:00:00.123456Z',
        actor: { type: 'person', id: '12', name: 'Sam Lee' },
        action: 'store_device.enrolled',
        target: { type: 'store_device', id: '3', name: 'Front desk tablet' },
        organization_id: 1,
        location_id: 10,
        changes: { name: { from: null, to: 'Front desk tablet' }, location_id: { from: null, to: 10 } },
        ip: '203.0.113.7',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
      },
    ],
  },
);

export const AuditEntries = Type.Object(
  {
    entries: Type.Array(AuditEntry, { description: 'newest first' }),
    next_cursor: nullable(Type.String({ description: 'the cursor of the next page; null on the last one' })),
  },
  { title: 'AuditEntries' },
);

export const AUDIT_ERRORS = {
  401: errorResponse('no session or token, or one that is not valid', ['unauthorized']),
  403: errorResponse('a person who administers nothing (or not this location), a token without the admin scope', [
    'forbidden',
    'insufficient_scope',
    'password_change_required',
  ]),
  404: errorResponse('the location is out of reach (another organization, or one the caller does not reach)', ['not_found']),
  ...errorResponses({ 422: 'a filter is not valid, from after to, or a cursor this listing did not give', ...SERVICE_ERRORS }),
};
