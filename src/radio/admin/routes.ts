// Section 18's radio edge devices and messaging accounts over HTTP. Parse, call the use case
// (edges.ts, messaging.ts), render the view.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminAuth, administratorOf, type AdminAuthDeps } from '../../admin/auth.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, FILE_409, security, tags, VERSION_ERRORS, VersionQuery } from '../../admin/schemas.ts';
import { auditOriginOf } from '../../audit/record.ts';
import { header } from '../../http/auth.ts';
import { etagOf, expectedVersions } from '../../http/if-match.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { createRadioEdge, deleteRadioEdge, listRadioEdges, rotateRadioEdgeKey, updateRadioEdge, type RadioAdminDeps } from './edges.ts';
import { createMessagingAccount, deleteMessagingAccount, listMessagingAccounts, updateMessagingAccount } from './messaging.ts';
import {
  AccountParams,
  EdgeParams,
  MessagingAccountChange,
  MessagingAccountView,
  NewMessagingAccount,
  NewRadioEdge,
  RadioEdgeChange,
  RadioEdgeView,
  RadioEdgeWithKey,
  RotateQuery,
} from './schemas.ts';
import { accountView, edgeView } from './views.ts';

export type RadioAdminRouteDeps = RadioAdminDeps & AdminAuthDeps;

const EDGE_404 = errorResponses({ 404: 'no such edge device (or one you do not see)' });
const ACCOUNT_404 = errorResponses({ 404: 'no such messaging account of your organization' });
const ID_TAKEN = { description: 'id_taken: it exists already', codes: ['id_taken'] };
const DELETE_409 = {
  description: 'managed_by_file: the provisioning file manages it; in_use: it has history (retire it with enabled: false)',
  codes: ['managed_by_file', 'in_use'],
};

export async function radioAdminRoutes(fastify: FastifyInstance, deps: RadioAdminRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const acting = (request: FastifyRequest) => ({ actor: administratorOf(request), origin: auditOriginOf(request) });

  app.get(
    '/api/admin/radio_edges',
    {
      onRequest,
      schema: {
        operationId: 'listRadioEdges',
        tags,
        security,
        summary: 'Radio edge devices',
        description: 'The edge devices of the locations you administer; never their keys.',
        response: { 200: Type.Array(RadioEdgeView), ...ADMIN_ERRORS },
      },
    },
    async (request) => (await listRadioEdges(deps, administratorOf(request))).map(edgeView),
  );

  app.post(
    '/api/admin/radio_edges',
    {
      onRequest,
      schema: {
        operationId: 'createRadioEdge',
        tags,
        security,
        summary: 'Add a radio edge device',
        description:
          "The provisioning file's fields; `edge_id` and `device_key` are made by the service when not given. The answer holds the key " +
          '(`device_key`) once: it is stored only as a digest. The device logs in to MQTT as `edge:<edge_id>` with it at once, on every instance.',
        body: NewRadioEdge,
        response: { 201: RadioEdgeWithKey, ...CHANGE_ERRORS, ...errorResponses({ 409: ID_TAKEN }) },
      },
    },
    async (request, reply) => {
      const { row, deviceKey } = await createRadioEdge(deps, acting(request), request.body);
      void reply.header('etag', etagOf(row.version));
      return reply.code(201).send({ ...edgeView(row), device_key: deviceKey });
    },
  );

  app.patch(
    '/api/admin/radio_edges/:edge_id',
    {
      onRequest,
      schema: {
        operationId: 'updateRadioEdge',
        tags,
        security,
        summary: 'Change a radio edge device',
        description:
          'Changes the fields sent; send the version changed from (`If-Match: "<version>"` or `version`). `enabled: false` retires it: its ' +
          'key is refused at its next request or MQTT connection and nothing is announced to it; its transcripts stay readable.',
        params: EdgeParams,
        body: RadioEdgeChange,
        response: { 200: RadioEdgeView, ...CHANGE_ERRORS, ...EDGE_404, ...errorResponses({ 409: FILE_409 }), ...VERSION_ERRORS },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.body.version);
      const row = await updateRadioEdge(deps, acting(request), request.params.edge_id, request.body, expected);
      void reply.header('etag', etagOf(row.version));
      return edgeView(row);
    },
  );

  app.post(
    '/api/admin/radio_edges/:edge_id/rotate_key',
    {
      onRequest,
      schema: {
        operationId: 'rotateRadioEdgeKey',
        tags,
        security,
        summary: 'Give a radio edge device a new key',
        description:
          'The answer holds the new key (`device_key`) once. The old key is refused from the next request or MQTT connection on, on every ' +
          'instance. A version (`If-Match` or `?version=`) is checked when sent.',
        params: EdgeParams,
        querystring: RotateQuery,
        response: {
          200: RadioEdgeWithKey,
          ...ADMIN_ERRORS,
          ...EDGE_404,
          ...VERSION_ERRORS,
          ...errorResponses({ ...BODY_ERRORS, 409: FILE_409, 422: 'edge_id or version is not valid' }),
        },
      },
    },
    async (request, reply) => {
      const named = request.query.version !== undefined || header(request, 'if-match') !== undefined;
      const expected = named ? expectedVersions(request, request.query.version) : null;
      const { row, deviceKey } = await rotateRadioEdgeKey(deps, acting(request), request.params.edge_id, expected);
      void reply.header('etag', etagOf(row.version));
      return { ...edgeView(row), device_key: deviceKey };
    },
  );

  app.delete(
    '/api/admin/radio_edges/:edge_id',
    {
      onRequest,
      schema: {
        operationId: 'deleteRadioEdge',
        tags,
        security,
        summary: 'Delete a radio edge device',
        description:
          'Send the version deleted from (`If-Match: "<version>"` or `?version=`). A device that played or heard anything keeps its ' +
          'history (409 `in_use`): retire it with `enabled: false`.',
        params: EdgeParams,
        querystring: VersionQuery,
        response: {
          204: Type.Null({ description: 'deleted' }),
          ...ADMIN_ERRORS,
          ...EDGE_404,
          ...VERSION_ERRORS,
          ...errorResponses({ ...BODY_ERRORS, 409: DELETE_409, 422: 'edge_id or version is not valid' }),
        },
      },
    },
    async (request, reply) => {
      await deleteRadioEdge(deps, acting(request), request.params.edge_id, expectedVersions(request, request.query.version));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/admin/messaging_accounts',
    {
      onRequest,
      schema: {
        operationId: 'listMessagingAccounts',
        tags,
        security,
        summary: 'Messaging-provider accounts',
        description: "The organization's accounts (R2 checks their signatures); never an auth token. Organization administrators only.",
        response: { 200: Type.Array(MessagingAccountView), ...ADMIN_ERRORS },
      },
    },
    async (request) => (await listMessagingAccounts(deps, administratorOf(request))).map(accountView),
  );

  app.post(
    '/api/admin/messaging_accounts',
    {
      onRequest,
      schema: {
        operationId: 'createMessagingAccount',
        tags,
        security,
        summary: 'Add a messaging-provider account',
        description:
          "The provider's `account_sid` and `auth_token` (the key of the signatures it sends, never shown again). The next R2 of the " +
          'account is checked with it, on every instance. Organization administrators only.',
        body: NewMessagingAccount,
        response: { 201: MessagingAccountView, ...CHANGE_ERRORS, ...errorResponses({ 409: ID_TAKEN }) },
      },
    },
    async (request, reply) => {
      const row = await createMessagingAccount(deps, acting(request), request.body);
      void reply.header('etag', etagOf(row.version));
      return reply.code(201).send(accountView(row));
    },
  );

  app.patch(
    '/api/admin/messaging_accounts/:account_sid',
    {
      onRequest,
      schema: {
        operationId: 'updateMessagingAccount',
        tags,
        security,
        summary: 'Change a messaging-provider account',
        description:
          'A new `auth_token` (the provider rotated it) or `enabled` (false: its signatures are refused, 403); send the version changed ' +
          'from (`If-Match: "<version>"` or `version`).',
        params: AccountParams,
        body: MessagingAccountChange,
        response: { 200: MessagingAccountView, ...CHANGE_ERRORS, ...ACCOUNT_404, ...errorResponses({ 409: FILE_409 }), ...VERSION_ERRORS },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.body.version);
      const row = await updateMessagingAccount(deps, acting(request), request.params.account_sid, request.body, expected);
      void reply.header('etag', etagOf(row.version));
      return accountView(row);
    },
  );

  app.delete(
    '/api/admin/messaging_accounts/:account_sid',
    {
      onRequest,
      schema: {
        operationId: 'deleteMessagingAccount',
        tags,
        security,
        summary: 'Delete a messaging-provider account',
        description: 'Send the version deleted from. An account messages came through is kept (409 `in_use`): retire it with `enabled: false`.',
        params: AccountParams,
        querystring: VersionQuery,
        response: {
          204: Type.Null({ description: 'deleted' }),
          ...ADMIN_ERRORS,
          ...ACCOUNT_404,
          ...VERSION_ERRORS,
          ...errorResponses({ ...BODY_ERRORS, 409: DELETE_409, 422: 'account_sid or version is not valid' }),
        },
      },
    },
    async (request, reply) => {
      await deleteMessagingAccount(deps, acting(request), request.params.account_sid, expectedVersions(request, request.query.version));
      return reply.code(204).send(null);
    },
  );
}
