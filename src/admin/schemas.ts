// TypeBox every section 18 operation shares: how it is called, an object's version and owner, and
// the refusals any administration operation may give.
import { Type, type TSchema } from 'typebox';
import { BODY_ERRORS, errorResponse, errorResponses, oneOf, RowId, SERVICE_ERRORS, Timestamp } from '../http/schemas.ts';

export const security: { [scheme: string]: string[] }[] = [{ session: [] }, { bearerToken: [] }];
export const tags = ['administration'];

export const ManagedBy = oneOf(['admin', 'file'] as const, {
  description: 'file: made by the provisioning file, which alone changes it (409 managed_by_file here)',
});
export const Version = Type.Integer({ minimum: 1, description: 'increases with each change; send it back (If-Match or version) to change the object' });

export const IdParams = Type.Object({ id: RowId });

export const VersionQuery = Type.Object({ version: Type.Optional(Version) });

/** The refusals every administration operation may give. */
export const ADMIN_ERRORS = {
  401: errorResponse('signed out, or a missing or invalid bearer token', ['unauthorized']),
  403: errorResponse(
    'forbidden: your role may not do this (staff, a location admin beyond their locations); insufficient_scope: the token lacks admin; ' +
      'csrf_failed: a session without its CSRF token or from another origin; password_change_required: change the one-time password first',
    ['forbidden', 'insufficient_scope', 'csrf_failed', 'password_change_required'],
  ),
  ...errorResponses({ ...SERVICE_ERRORS }),
};

export const CHANGE_ERRORS = { ...ADMIN_ERRORS, ...errorResponses({ ...BODY_ERRORS, 422: 'a field is not valid: errors by field' }) };

/** A 409 of an operation on an object the provisioning file may own. */
export const FILE_409 = { description: 'managed_by_file: the provisioning file manages it; change it there', codes: ['managed_by_file'] };

export const VERSION_ERRORS = errorResponses({
  412: { description: 'version_conflict: the object changed since the version sent; nothing changed', codes: ['version_conflict'] },
  428: { description: 'version_required: send If-Match: "<version>" (or version)', codes: ['version_required'] },
});

/** The fields every administered setup object carries beside its provisioning file entry's. */
const objectFields = {
  enabled: Type.Boolean({ description: 'false: retired; customers and devices no longer reach it, reports still show it' }),
  version: Version,
  managed_by: ManagedBy,
  created_at: Timestamp,
  updated_at: Timestamp,
};

type Props = Record<string, TSchema>;

/**
 * A setup object's schemas from its provisioning file entry (section 7), so a field is validated
 * alike in the file and here: its view (the entry's fields, `enabled`, `version`, `managed_by`),
 * its new body (the id the service's when left out; `optional` fields too) and its change (any of
 * the fields, and the version changed from). Bodies are closed, as the file is.
 */
export function objectSchemas<P extends Props>(
  name: string,
  entry: P,
  opts: { hidden?: readonly string[]; optional?: readonly string[]; fixed?: readonly string[]; description: string },
) {
  const shown = Object.fromEntries(Object.entries(entry).filter(([k]) => !(opts.hidden ?? []).includes(k)));
  const optional = (props: Props, keys: readonly string[]) =>
    Object.fromEntries(Object.entries(props).map(([k, v]) => [k, keys.includes(k) ? Type.Optional(v) : v]));
  const changeable = Object.fromEntries(Object.entries(entry).filter(([k]) => k !== 'id' && !(opts.fixed ?? []).includes(k)));
  return {
    View: Type.Object({ ...shown, ...objectFields }, { title: name, description: opts.description }),
    New: Type.Object(optional({ ...entry, enabled: Type.Boolean() }, ['id', 'enabled', ...(opts.optional ?? [])]), {
      title: `New${name}`,
      additionalProperties: false,
    }),
    Change: Type.Object(
      { ...optional(changeable, Object.keys(changeable)), enabled: Type.Optional(Type.Boolean()), version: Type.Optional(Version) },
      {
        title: `${name}Change`,
        additionalProperties: false,
      },
    ),
  };
}

export const LocationQuery = Type.Object({ location_id: Type.Optional(RowId) });
