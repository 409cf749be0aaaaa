// TypeBox every section 18 operation shares: how it is called, an object's version and owner, and
// the refusals any administration operation may give.
import { Type } from 'typebox';
import { BODY_ERRORS, errorResponse, errorResponses, oneOf, RowId, SERVICE_ERRORS } from '../http/schemas.ts';

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
