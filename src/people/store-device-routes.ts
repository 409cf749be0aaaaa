// Section 18's store devices over HTTP: listStoreDevices, enrollStoreDevice (whose answer sets the
// device cookie in the browser that asked) and revokeStoreDevice. A person's session with its CSRF
// token, or a token with the admin scope (which cannot enroll: it has no browser to become the device).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/db.ts';
import { auditOriginOf } from '../audit/record.ts';
import {
  BODY_ERRORS,
  INT32_MAX,
  errorResponse,
  errorResponses,
  NullableTimestamp,
  nullable,
  RowId,
  SERVICE_ERRORS,
  StorableText,
  Timestamp,
} from '../http/schemas.ts';
import { adminAuth, administratorOf, type AdminAuthDeps } from '../admin/auth.ts';
import { deviceCookieHeader, sessionCookieHeader } from './cookies.ts';
import { sessionValueOf } from './guard.ts';
import type { StoreDeviceSignIn } from './store-device-sign-in.ts';
import { enrollStoreDevice, listStoreDevices, revokeStoreDevice, type StoreDeviceDeps, type StoreDeviceRow } from './store-devices.ts';

export interface StoreDeviceRouteDeps extends AdminAuthDeps, StoreDeviceDeps {
  db: Db;
  /** The enrolled device a browser is, by its cookie. */
  storeDevices: Pick<StoreDeviceSignIn, 'deviceOf'>;
}

export const StoreDevice = Type.Object(
  {
    id: Type.Integer(),
    organization_id: Type.Integer(),
    location_id: Type.Integer(),
    name: Type.String({ examples: ['Front desk tablet'] }),
    enrolled_by: nullable(Type.Object({ id: Type.Integer(), name: Type.String() }, { description: 'the person who enrolled it' })),
    created_at: Timestamp,
    last_seen_at: { ...NullableTimestamp, description: 'the last badge or PIN sign-in on it' },
    revoked_at: NullableTimestamp,
  },
  { title: 'StoreDevice', description: 'an enrolled store device (section 17): a browser where people of its location sign in with a badge or a PIN' },
);

const StoreDeviceQuery = Type.Object(
  {
    location_id: Type.Optional(
      Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'only this location (one the caller administers); all it administers when absent' }),
    ),
  },
  { title: 'StoreDeviceQuery' },
);

const EnrollBody = Type.Object(
  {
    location_id: RowId,
    name: StorableText({ minLength: 1, maxLength: 100, description: 'what the store calls it, e.g. "Front desk tablet"' }),
  },
  { title: 'StoreDeviceEnrollment' },
);

const IdParams = Type.Object({ id: RowId });

const tags = ['administration'];
const security: Record<string, string[]>[] = [{ session: [] }, { bearerToken: [] }];
const REFUSALS = {
  401: errorResponse('no session or token, or one that is not valid', ['unauthorized']),
  403: errorResponse('a role or token that does not administer this, a token without the admin scope, or a change without the CSRF token', [
    'forbidden',
    'insufficient_scope',
    'csrf_failed',
    'password_change_required',
  ]),
  404: errorResponse('not found, or out of reach (another organization, a location the caller does not reach)', ['not_found']),
};

export function storeDeviceView(row: StoreDeviceRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    location_id: row.location_id,
    name: row.name,
    enrolled_by: row.enrolled_by === null ? null : { id: row.enrolled_by, name: row.enrolled_by_name ?? '' },
    created_at: row.created_at,
    last_seen_at: row.last_seen_at,
    revoked_at: row.revoked_at,
  };
}

export async function storeDeviceRoutes(fastify: FastifyInstance, deps: StoreDeviceRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const secure = new URL(deps.publicBaseUrl).protocol === 'https:';

  app.get(
    '/api/admin/store_devices',
    {
      onRequest,
      schema: {
        operationId: 'listStoreDevices',
        tags,
        security,
        summary: 'Store devices of the locations the caller administers',
        description:
          'Enrolled and revoked devices, by location and name. With `location_id`: that location only (out of reach 404, a location the ' +
          'caller works at but does not administer 403).',
        querystring: StoreDeviceQuery,
        response: {
          200: Type.Array(StoreDevice),
          ...REFUSALS,
          403: errorResponse('a person who administers nothing (or not this location), or a token without the admin scope', [
            'forbidden',
            'insufficient_scope',
            'password_change_required',
          ]),
          ...errorResponses({ 422: 'location_id is not an id', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request) => (await listStoreDevices(deps, administratorOf(request), request.query.location_id ?? null)).map(storeDeviceView),
  );

  app.post(
    '/api/admin/store_devices',
    {
      onRequest,
      schema: {
        operationId: 'enrollStoreDevice',
        tags,
        security: [{ session: [] }],
        summary: 'Enroll this browser as a store device of a location',
        description:
          'Called by an org_admin or location_admin with their session (and its CSRF token) in the browser that becomes the device. ' +
          'The answer sets the device cookie (storeops_device: 256 random bits, HttpOnly, kept across sign-outs until the device is ' +
          'revoked) and ends the enrolling session, so no administrator stays signed in on a shared device: people of the location ' +
          'then sign in there with a badge or email and PIN (signIn). A bearer token cannot enroll (403 forbidden); a browser that ' +
          'already is an enrolled device: 409 already_enrolled (revoke it first).',
        body: EnrollBody,
        response: {
          201: StoreDevice,
          ...REFUSALS,
          403: errorResponse('not an admin of the location, a token (a device is enrolled from a session), or no CSRF token', [
            'forbidden',
            'insufficient_scope',
            'csrf_failed',
            'password_change_required',
          ]),
          409: errorResponse('this browser already is an enrolled store device: revoke it first', ['already_enrolled']),
          ...errorResponses({ 422: 'a field is missing or not valid', ...BODY_ERRORS, ...SERVICE_ERRORS }),
        },
      },
    },
    async (request, reply) => {
      const actor = administratorOf(request);
      const browser = { session: sessionValueOf(request) ?? '', device: await deps.storeDevices.deviceOf(request) };
      const enrolled = await enrollStoreDevice(deps, actor, request.body, browser, auditOriginOf(request));
      reply.header('set-cookie', [deviceCookieHeader(enrolled.cookie, secure), sessionCookieHeader(null, secure)]);
      return reply.code(201).send(storeDeviceView(enrolled.device));
    },
  );

  app.post(
    '/api/admin/store_devices/:id/revoke',
    {
      onRequest,
      schema: {
        operationId: 'revokeStoreDevice',
        tags,
        security,
        summary: 'Revoke a store device',
        description:
          'Its cookie is refused from now on (badge and PIN sign-in there answer 403) and its shift sessions end, at their next ' +
          'request on every instance. Revoking a revoked device changes nothing and answers it as it is. The browser that is the ' +
          'device keeps its cookie until it is told otherwise: revoking from that browser removes it.',
        params: IdParams,
        response: { 200: StoreDevice, ...REFUSALS, ...errorResponses({ 422: 'id is not an id', ...BODY_ERRORS, ...SERVICE_ERRORS }) },
      },
    },
    async (request, reply) => {
      const here = await deps.storeDevices.deviceOf(request);
      const device = await revokeStoreDevice(deps, administratorOf(request), request.params.id, auditOriginOf(request));
      // Revoked from the browser that was the device: its cookie is of no use any more.
      if (here?.id === device.id) reply.header('set-cookie', deviceCookieHeader(null, secure));
      return storeDeviceView(device);
    },
  );
}
