// Section 18's people over HTTP: listPeople, getPerson, createPerson, updatePerson and
// endPersonSessions. Parse, call the use case (people-admin.ts), render the view.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { auditOriginOf } from '../../audit/record.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { etagOf, expectedVersions } from '../../http/if-match.ts';
import { adminAuth, administratorOf, type AdminAuthDeps } from '../../admin/auth.ts';
import { createPerson, endPersonSessions, getPerson, listPeople, updatePerson, type ChangedPerson, type PeopleAdminDeps } from './people-admin.ts';
import { ChangedPerson as ChangedPersonSchema, EndedSessions, NewPerson, PeopleQuery, PersonChange, PersonView } from './schemas.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, IdParams, security, tags, VERSION_ERRORS } from '../../admin/schemas.ts';
import { personView } from './views.ts';

export interface AdminRouteDeps extends Omit<AdminAuthDeps, 'db'>, PeopleAdminDeps {
  /** Sessions ended here: their live streams on this instance end now. */
  sessionEnded: (sessionId: number) => void;
}

const NOT_FOUND = errorResponses({ 404: 'no such person (or one you do not administer)' });
const PERSON_409 = errorResponses({
  409: {
    description:
      'managed_by_file: the provisioning file manages this person; email_taken, badge_taken: another person has it; ' +
      'last_org_admin: the change would leave the organization without an active org_admin',
    codes: ['managed_by_file', 'email_taken', 'badge_taken', 'last_org_admin'],
  },
});

export async function peopleAdminRoutes(fastify: FastifyInstance, deps: AdminRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);

  const answer = (reply: FastifyReply, changed: ChangedPerson) => {
    for (const id of changed.endedSessions) deps.sessionEnded(id);
    void reply.header('etag', etagOf(changed.person.version));
    const view = personView(changed.person);
    return changed.oneTimePassword === null ? view : { ...view, one_time_password: changed.oneTimePassword };
  };

  app.get(
    '/api/admin/people',
    {
      onRequest,
      schema: {
        operationId: 'listPeople',
        tags,
        security,
        summary: 'People you administer',
        description:
          "An org_admin (or an admin token limited to no location) sees the organization's people; a location_admin (or a limited token) " +
          'the people with a role at its locations, and the org_admins. `location_id`: only those with a role there.',
        querystring: PeopleQuery,
        response: {
          200: Type.Array(PersonView),
          ...ADMIN_ERRORS,
          ...errorResponses({ 404: 'no such location (or one you do not administer)', 422: 'location_id is not an id' }),
        },
      },
    },
    async (request) => (await listPeople(deps, administratorOf(request), request.query.location_id)).map(personView),
  );

  app.get(
    '/api/admin/people/:id',
    {
      onRequest,
      schema: {
        operationId: 'getPerson',
        tags,
        security,
        summary: 'A person',
        description: 'With their memberships (each says how it was granted) and an ETag of their version. Never a password, PIN or badge code.',
        params: IdParams,
        response: { 200: PersonView, ...ADMIN_ERRORS, ...NOT_FOUND, ...errorResponses({ 422: 'id is not an id' }) },
      },
    },
    async (request, reply) => {
      const row = await getPerson(deps, administratorOf(request), request.params.id);
      void reply.header('etag', etagOf(row.version));
      return personView(row);
    },
  );

  app.post(
    '/api/admin/people',
    {
      onRequest,
      schema: {
        operationId: 'createPerson',
        tags,
        security,
        summary: 'Make a person',
        description:
          'With at least one membership you may grant (a location_admin: location_admin or staff at its locations). `password: true` makes a ' +
          'one-time password, shown once in this answer (`one_time_password`) and changed at the first sign-in; `pin` (6 to 12 digits) and ' +
          '`badge_code` are for store devices and never shown again.',
        body: NewPerson,
        response: { 201: ChangedPersonSchema, ...CHANGE_ERRORS, ...PERSON_409 },
      },
    },
    async (request, reply) => {
      const changed = await createPerson(deps, { actor: administratorOf(request), origin: auditOriginOf(request) }, request.body);
      return reply.code(201).send(answer(reply, changed));
    },
  );

  app.patch(
    '/api/admin/people/:id',
    {
      onRequest,
      schema: {
        operationId: 'updatePerson',
        tags,
        security,
        summary: 'Change a person',
        description:
          'Changes the fields sent; send the version changed from (`If-Match: "<version>"` or `version`). `memberships` replaces the ' +
          "memberships administration granted (a location_admin's: those at its locations; single sign-on's stay). Disabling a person, or " +
          'a new password, ends their sessions; a removed membership stops what relied on it at the next request. A location_admin ' +
          'changes a person as a whole (not only memberships) only when all their roles are at its locations, and never an org_admin.',
        params: IdParams,
        body: PersonChange,
        response: { 200: ChangedPersonSchema, ...CHANGE_ERRORS, ...NOT_FOUND, ...PERSON_409, ...VERSION_ERRORS },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.body.version);
      const acting = { actor: administratorOf(request), origin: auditOriginOf(request) };
      return answer(reply, await updatePerson(deps, acting, request.params.id, request.body, expected));
    },
  );

  app.post(
    '/api/admin/people/:id/sessions/end',
    {
      onRequest,
      schema: {
        operationId: 'endPersonSessions',
        tags,
        security,
        summary: "End a person's sessions",
        description:
          'Every live session of the person ends now, on every instance (their next request is signed out); store devices stay enrolled. ' +
          'Also for a person the provisioning file manages.',
        params: IdParams,
        response: { 200: EndedSessions, ...ADMIN_ERRORS, ...NOT_FOUND, ...errorResponses({ ...BODY_ERRORS, 422: 'id is not an id' }) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const ended = await endPersonSessions(deps, { actor: administratorOf(request), origin: auditOriginOf(request) }, id);
      for (const sessionId of ended) deps.sessionEnded(sessionId);
      return { person_id: id, sessions_ended: ended.length };
    },
  );
}
