// Section 18's SSO role mappings over HTTP. Parse, call the use case (sso-mappings.ts), render the view.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { auditOriginOf } from '../../audit/record.ts';
import { expectedVersions } from '../../http/if-match.ts';
import { errorResponses } from '../../http/schemas.ts';
import { adminAuth, administratorOf } from '../../admin/auth.ts';
import type { AdminRouteDeps } from './people-admin-routes.ts';
import { NewSsoRoleMapping, SsoRoleMappingView } from './schemas.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, FILE_409, IdParams, security, tags, VERSION_ERRORS, VersionQuery } from '../../admin/schemas.ts';
import { createSsoRoleMapping, deleteSsoRoleMapping, listSsoRoleMappings } from './sso-mappings.ts';
import { mappingView } from './views.ts';

export async function ssoMappingRoutes(fastify: FastifyInstance, deps: AdminRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const acting = (request: Parameters<typeof administratorOf>[0]) => ({ actor: administratorOf(request), origin: auditOriginOf(request) });

  app.get(
    '/api/admin/sso_role_mappings',
    {
      onRequest,
      schema: {
        operationId: 'listSsoRoleMappings',
        tags,
        security,
        summary: 'SSO role mappings',
        description: 'Which claim value grants which role over which locations. A location_admin sees the mappings that grant a role at its locations.',
        response: { 200: Type.Array(SsoRoleMappingView), ...ADMIN_ERRORS },
      },
    },
    async (request) => (await listSsoRoleMappings(deps, administratorOf(request))).map(mappingView),
  );

  app.post(
    '/api/admin/sso_role_mappings',
    {
      onRequest,
      schema: {
        operationId: 'createSsoRoleMapping',
        tags,
        security,
        summary: 'Map a claim value to a role',
        description:
          'People whose OIDC_ROLES_CLAIM holds `claim_value` get the role over the locations at their next single sign-on. A location_admin ' +
          'maps to location_admin or staff at its locations.',
        body: NewSsoRoleMapping,
        response: {
          201: SsoRoleMappingView,
          ...CHANGE_ERRORS,
          ...errorResponses({
            409: { description: 'sso_role_mapping_exists: that claim value is mapped to that role already', codes: ['sso_role_mapping_exists'] },
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(mappingView(await createSsoRoleMapping(deps, acting(request), request.body))),
  );

  app.delete(
    '/api/admin/sso_role_mappings/:id',
    {
      onRequest,
      schema: {
        operationId: 'deleteSsoRoleMapping',
        tags,
        security,
        summary: 'Delete an SSO role mapping',
        description:
          'Send the version deleted from (`If-Match: "<version>"` or `?version=`). The roles it granted are taken away at each ' +
          "person's next single sign-on; to cut someone off now, disable them or end their sessions.",
        params: IdParams,
        querystring: VersionQuery,
        response: {
          204: Type.Null({ description: 'deleted' }),
          ...ADMIN_ERRORS,
          ...VERSION_ERRORS,
          ...errorResponses({ 404: 'no such mapping (or one you do not see)', 409: FILE_409, 422: 'id or version is not valid' }),
        },
      },
    },
    async (request, reply) => {
      await deleteSsoRoleMapping(deps, acting(request), request.params.id, expectedVersions(request, request.query.version));
      return reply.code(204).send(null);
    },
  );
}
