// Section 18's service accounts and their tokens over HTTP. Parse, call the use case
// (service-accounts.ts), render the view.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { auditOriginOf } from '../../audit/record.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { adminAuth, administratorOf } from '../../admin/auth.ts';
import type { AdminRouteDeps } from './people-admin-routes.ts';
import { CreatedToken, NewServiceAccount, NewToken, ServiceAccountView, TokenParams, TokenView } from './schemas.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, FILE_409, IdParams, security, tags } from '../../admin/schemas.ts';
import { createServiceAccount, createServiceAccountToken, listServiceAccounts, revokeServiceAccountToken } from './service-accounts.ts';
import { serviceAccountView, tokenView } from './views.ts';

export async function serviceAccountRoutes(fastify: FastifyInstance, deps: AdminRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const acting = (request: Parameters<typeof administratorOf>[0]) => ({ actor: administratorOf(request), origin: auditOriginOf(request) });

  app.get(
    '/api/admin/service_accounts',
    {
      onRequest,
      schema: {
        operationId: 'listServiceAccounts',
        tags,
        security,
        summary: 'Service accounts and their tokens',
        description:
          'Tokens show their name, scopes, locations, expiry, last use and revocation, never their value. A location_admin (or a limited ' +
          'admin token) sees the tokens limited to its locations, and the accounts that hold one of them or hold no token.',
        response: { 200: Type.Array(ServiceAccountView), ...ADMIN_ERRORS },
      },
    },
    async (request) => (await listServiceAccounts(deps, administratorOf(request))).map(serviceAccountView),
  );

  app.post(
    '/api/admin/service_accounts',
    {
      onRequest,
      schema: {
        operationId: 'createServiceAccount',
        tags,
        security,
        summary: 'Make a service account',
        description:
          'An integration, a chat platform, a call button hub: an account of the organization that holds tokens. Its name is unique in the organization.',
        body: NewServiceAccount,
        response: {
          201: ServiceAccountView,
          ...CHANGE_ERRORS,
          ...errorResponses({ 409: { description: 'name_taken: the organization has an account of that name', codes: ['name_taken'] } }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(serviceAccountView(await createServiceAccount(deps, acting(request), request.body))),
  );

  app.post(
    '/api/admin/service_accounts/:id/tokens',
    {
      onRequest,
      schema: {
        operationId: 'createServiceAccountToken',
        tags,
        security,
        summary: 'Make a token of a service account',
        description:
          'The answer holds the token (`token`) once: it is stored only as a hash. A location_admin (or a limited admin token) makes ' +
          'tokens limited to its locations (`location_ids` required); the `admin` scope administers those locations, or the organization ' +
          'when unlimited (organization administrators only).',
        params: IdParams,
        body: NewToken,
        response: {
          201: CreatedToken,
          ...CHANGE_ERRORS,
          ...errorResponses({ 404: 'no such service account (or one you do not see)', 409: FILE_409 }),
        },
      },
    },
    async (request, reply) => {
      const { token, row } = await createServiceAccountToken(deps, acting(request), request.params.id, request.body);
      return reply.code(201).send({ ...tokenView(row), service_account_id: row.service_account_id, token });
    },
  );

  app.post(
    '/api/admin/service_accounts/:id/tokens/:token_id/revoke',
    {
      onRequest,
      schema: {
        operationId: 'revokeServiceAccountToken',
        tags,
        security,
        summary: 'Revoke a token',
        description:
          'The token is refused at its next request on every instance (within a second: a live token is remembered that long). ' +
          'It stays listed with its revoked_at; revoking it again answers it unchanged.',
        params: TokenParams,
        response: {
          200: TokenView,
          ...ADMIN_ERRORS,
          ...errorResponses({ ...BODY_ERRORS, 404: 'no such token of this account (or one you do not see)', 409: FILE_409, 422: 'an id is not an id' }),
        },
      },
    },
    async (request) => tokenView(await revokeServiceAccountToken(deps, acting(request), request.params.id, request.params.token_id)),
  );
}
