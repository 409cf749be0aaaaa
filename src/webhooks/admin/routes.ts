// Section 18's webhook endpoints over HTTP. Parse, call the use case (endpoints.ts), render the view.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminAuth, administratorOf, type AdminAuthDeps } from '../../admin/auth.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, FILE_409, IdParams, security, tags, VERSION_ERRORS, VersionQuery } from '../../admin/schemas.ts';
import { auditOriginOf } from '../../audit/record.ts';
import { etagOf, expectedVersions } from '../../http/if-match.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { createWebhook, deleteWebhook, listWebhooks, testWebhook, updateWebhook, type EndpointAdminDeps } from './endpoints.ts';
import { CreatedWebhook, NewWebhook, WebhookChange, WebhookTestResult, WebhookView } from './schemas.ts';
import { webhookView } from './views.ts';

export type WebhookAdminRouteDeps = EndpointAdminDeps & AdminAuthDeps;

const NOT_FOUND = errorResponses({ 404: 'no such endpoint (or one you do not see)' });

export async function webhookAdminRoutes(fastify: FastifyInstance, deps: WebhookAdminRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const acting = (request: Parameters<typeof administratorOf>[0]) => ({ actor: administratorOf(request), origin: auditOriginOf(request) });

  app.get(
    '/api/admin/webhooks',
    {
      onRequest,
      schema: {
        operationId: 'listWebhooks',
        tags,
        security,
        summary: 'Webhook endpoints',
        description:
          'Endpoints of the whole organization (`location_id` null) and of its locations; a location_admin (or a limited admin token) ' +
          'sees those of its locations. Never a secret: a slack or teams URL (itself the secret) shows as its origin and last 4 characters.',
        response: { 200: Type.Array(WebhookView), ...ADMIN_ERRORS },
      },
    },
    async (request) => (await listWebhooks(deps, administratorOf(request))).map(webhookView),
  );

  app.post(
    '/api/admin/webhooks',
    {
      onRequest,
      schema: {
        operationId: 'createWebhook',
        tags,
        security,
        summary: 'Add a webhook endpoint',
        description:
          "The provisioning file's fields. `format`: `signed` (default: the event signed with `secret`, made by the service when not given " +
          'and answered once), `slack` (a Slack incoming-webhook URL) or `teams` (a Teams Workflows URL): chat cards, not signed, no ' +
          '`secret`. The next events go to it, on every instance. An endpoint of the whole organization is for organization administrators.',
        body: NewWebhook,
        response: {
          201: CreatedWebhook,
          ...CHANGE_ERRORS,
          ...errorResponses({ 409: { description: 'id_taken: an endpoint has that id', codes: ['id_taken'] } }),
        },
      },
    },
    async (request, reply) => {
      const { row, secret } = await createWebhook(deps, acting(request), request.body);
      void reply.header('etag', etagOf(row.version));
      return reply.code(201).send({ ...webhookView(row), ...(secret === null ? {} : { secret }) });
    },
  );

  app.patch(
    '/api/admin/webhooks/:id',
    {
      onRequest,
      schema: {
        operationId: 'updateWebhook',
        tags,
        security,
        summary: 'Change a webhook endpoint',
        description:
          'Changes the fields sent; send the version changed from (`If-Match: "<version>"` or `version`). `enabled: false` stops new ' +
          'deliveries (what is pending still goes). A new `secret` is never shown again. The masked URL sent back unchanged keeps the URL.',
        params: IdParams,
        body: WebhookChange,
        response: { 200: WebhookView, ...CHANGE_ERRORS, ...NOT_FOUND, ...errorResponses({ 409: FILE_409 }), ...VERSION_ERRORS },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.body.version);
      const row = await updateWebhook(deps, acting(request), request.params.id, request.body, expected);
      void reply.header('etag', etagOf(row.version));
      return webhookView(row);
    },
  );

  app.delete(
    '/api/admin/webhooks/:id',
    {
      onRequest,
      schema: {
        operationId: 'deleteWebhook',
        tags,
        security,
        summary: 'Delete a webhook endpoint',
        description:
          'Send the version deleted from (`If-Match: "<version>"` or `?version=`). An endpoint with deliveries is kept (409 `in_use`): ' +
          'retire it with `enabled: false`, its deliveries stay listed (W1).',
        params: IdParams,
        querystring: VersionQuery,
        response: {
          204: Type.Null({ description: 'deleted' }),
          ...ADMIN_ERRORS,
          ...VERSION_ERRORS,
          ...NOT_FOUND,
          ...errorResponses({
            ...BODY_ERRORS,
            409: { description: 'managed_by_file: the provisioning file manages it; in_use: it has deliveries', codes: ['managed_by_file', 'in_use'] },
            422: 'id or version is not valid',
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteWebhook(deps, acting(request), request.params.id, expectedVersions(request, request.query.version));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/admin/webhooks/:id/test',
    {
      onRequest,
      schema: {
        operationId: 'testWebhook',
        tags,
        security,
        summary: 'Send a test event now',
        description:
          "One Call for Help event of status `test`, in the endpoint's format (signed, or a Slack or Teams card), sent now and not " +
          'retried; the answer says what came back: delivered (a 2xx within 10 s), the status, the time taken, the start of the body, ' +
          'or why nothing came back. The address rules of deliveries apply: a private address is refused unless WEBHOOK_ALLOW_PRIVATE. ' +
          'Also for an endpoint the provisioning file manages, or a retired one.',
        params: IdParams,
        response: { 200: WebhookTestResult, ...ADMIN_ERRORS, ...NOT_FOUND, ...errorResponses({ ...BODY_ERRORS, 422: 'id is not an id' }) },
      },
    },
    async (request) => testWebhook(deps, administratorOf(request), request.params.id),
  );
}
