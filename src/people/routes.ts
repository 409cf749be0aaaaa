// Section 17's session operations over HTTP: signIn, getSession, changePassword and signOut. One
// session serves the console, the staff app and section 18's operations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { auditOriginOf } from '../audit/record.ts';
import { BODY_ERRORS, errorResponse, errorResponses, nullable, oneOf, SERVICE_ERRORS } from '../http/schemas.ts';
import { sessionCookieHeader } from './cookies.ts';
import { answersUncached, byPerson, changingWithSession, personOf, sameOrigin, sessionValueOf } from './guard.ts';
import { ROLES } from '../access/actor.ts';
import { changePassword, signInWithPassword, signOut, type SignInDeps } from './sign-in.ts';
import { csrfTokenOf, resumeSession } from './sessions.ts';
import { SECRET_MAX_LENGTH } from './passwords.ts';
import type { DeviceSignIn, StoreDeviceSignIn } from './store-device-sign-in.ts';

export interface SessionRouteDeps extends SignInDeps {
  publicBaseUrl: string;
  /** Badge and PIN sign-in on an enrolled store device, and the device a browser is. */
  storeDevices: StoreDeviceSignIn;
  /** A session that signed out here: its live streams end now (another instance's at their next check). */
  sessionEnded: (sessionId: number) => void;
}

export const SessionView = Type.Object(
  {
    signed_in: Type.Boolean(),
    person: nullable(Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() })),
    memberships: Type.Array(
      Type.Object({
        role: oneOf(ROLES),
        organization_id: Type.Integer(),
        location_ids: nullable(Type.Array(Type.Integer(), { description: 'null: every location of the organization (org_admin)' })),
      }),
    ),
    csrf_token: nullable(Type.String({ description: 'send it in x-csrf-token with every state-changing call' })),
    must_change_password: Type.Boolean({ description: 'a one-time password signed in: changePassword before anything else' }),
    store_device: nullable(Type.Object({ id: Type.Integer(), location_id: Type.Integer() }, { description: 'the enrolled store device this browser is' })),
  },
  { title: 'SessionView', description: 'who is signed in (getSession)' },
);

const SignInBody = Type.Union(
  [
    Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: SECRET_MAX_LENGTH }) }),
    Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), pin: Type.String({ minLength: 1, maxLength: 32 }) }),
    Type.Object({ badge_code: Type.String({ minLength: 1, maxLength: 256 }) }),
  ],
  { title: 'SignInRequest', description: 'email and password; or, on an enrolled store device, email and PIN or a badge code' },
);

/**
 * The way of signing in a body is, as the schema's first matching branch: fields of the other ways
 * may ride along (unknown fields are ignored), so a field's presence alone does not decide.
 */
function signInWay(body: Static<typeof SignInBody>): { email: string; password: string } | DeviceSignIn {
  const fields = body as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : null);
  const [email, password, pin, badge] = [text('email'), text('password'), text('pin'), text('badge_code')];
  if (email !== null && password !== null) return { email, password };
  if (email !== null && pin !== null) return { email, pin };
  return { badgeCode: badge ?? '' };
}

export async function sessionRoutes(fastify: FastifyInstance, deps: SessionRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const secure = new URL(deps.publicBaseUrl).protocol === 'https:';
  answersUncached(app);

  async function view(request: FastifyRequest, value: string | null) {
    const person = value === null ? null : await resumeSession(deps, value, byPerson(request));
    const device = await deps.storeDevices.deviceOf(request);
    const storeDevice = device === null ? null : { id: device.id, location_id: device.locationId };
    if (person === null || value === null) {
      return { signed_in: false, person: null, memberships: [], csrf_token: null, must_change_password: false, store_device: storeDevice };
    }
    return {
      signed_in: true,
      person: { id: person.personId, name: person.name, email: person.email },
      memberships: person.memberships.map((m) => ({
        role: m.role,
        organization_id: person.reach.organizationId,
        location_ids: m.locationIds === null ? null : [...m.locationIds],
      })),
      csrf_token: csrfTokenOf(value),
      must_change_password: person.mustChangePassword,
      store_device: storeDevice,
    };
  }

  const signedIn = async (request: FastifyRequest, reply: FastifyReply, session: string) => {
    reply.header('set-cookie', sessionCookieHeader(session, secure));
    return view(request, session);
  };

  app.post(
    '/api/session',
    {
      onRequest: sameOrigin(deps.publicBaseUrl),
      schema: {
        operationId: 'signIn',
        tags: ['people'],
        security: [],
        summary: 'Sign in',
        description:
          'Email and password (where PASSWORD_SIGN_IN allows it), or on an enrolled store device a badge code or email and PIN. ' +
          'Sets the session cookie (a new value at every sign-in). 10 failed passwords for one email in 15 minutes, or 5 wrong PINs ' +
          'for one person on one device, answer 429 for 15 minutes.',
        body: SignInBody,
        response: {
          200: SessionView,
          401: errorResponse('the email, password, PIN or badge is not right', ['unauthorized']),
          403: errorResponse('not allowed here: password sign-in turned off or for administrators only, or PIN and badge off an enrolled device', [
            'forbidden',
            'csrf_failed',
          ]),
          429: errorResponse('too many failed attempts for this email, or this person on this device; see Retry-After', [
            'too_many_attempts',
            'too_many_failures',
          ]),
          ...errorResponses({ ...BODY_ERRORS, 422: 'the body is none of the three ways of signing in (errors by field)', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request, reply) => {
      const way = signInWay(request.body);
      const origin = auditOriginOf(request);
      if ('password' in way) return signedIn(request, reply, (await signInWithPassword(deps, way.email, way.password, origin)).session);
      return signedIn(request, reply, await deps.storeDevices.signIn(request, way, origin));
    },
  );

  app.get(
    '/api/session',
    {
      schema: {
        operationId: 'getSession',
        tags: ['people'],
        security: [{ session: [] }, {}],
        summary: 'Who is signed in',
        description: 'Always 200: signed in or not, and the enrolled store device this browser is, if any. Asking never counts as a refused credential.',
        response: { 200: SessionView, ...errorResponses({ ...SERVICE_ERRORS }) },
      },
    },
    async (request) => view(request, sessionValueOf(request)),
  );

  app.post(
    '/api/session/password',
    {
      onRequest: changingWithSession(deps, { beforePasswordChange: true }),
      schema: {
        operationId: 'changePassword',
        tags: ['people'],
        security: [{ session: [] }],
        summary: 'Change my password',
        description: "The current password and a new one of at least 12 characters. Ends the person's other sessions; this one stays.",
        body: Type.Object(
          {
            current_password: Type.String({ minLength: 1, maxLength: SECRET_MAX_LENGTH }),
            new_password: Type.String({ minLength: 1, maxLength: SECRET_MAX_LENGTH }),
          },
          { title: 'PasswordChange' },
        ),
        response: {
          200: SessionView,
          401: errorResponse('signed out'),
          403: errorResponse('csrf_failed: no CSRF token, or not from this service', ['csrf_failed']),
          429: errorResponse('too many failed attempts; see Retry-After', ['too_many_attempts', 'too_many_failures']),
          ...errorResponses({ ...BODY_ERRORS, 422: 'a password is missing, too short, or the current one is not right (errors by field)', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request) => {
      await changePassword(deps, personOf(request), request.body.current_password, request.body.new_password, auditOriginOf(request));
      return view(request, sessionValueOf(request));
    },
  );

  app.post(
    '/api/session/end',
    {
      onRequest: changingWithSession(deps, { beforePasswordChange: true }),
      schema: {
        operationId: 'signOut',
        tags: ['people'],
        security: [{ session: [] }],
        summary: 'Sign out',
        description: 'Ends this session. On a store device this is "switch user": the device stays enrolled. Needs the CSRF token.',
        response: {
          200: SessionView,
          401: errorResponse('signed out'),
          403: errorResponse('csrf_failed', ['csrf_failed']),
          ...errorResponses({ ...BODY_ERRORS, ...SERVICE_ERRORS }),
        },
      },
    },
    async (request, reply) => {
      await signOut(deps, sessionValueOf(request) ?? '', auditOriginOf(request));
      deps.sessionEnded(personOf(request).sessionId);
      reply.header('set-cookie', sessionCookieHeader(null, secure));
      return view(request, null);
    },
  );
}
