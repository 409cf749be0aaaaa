// Section 18's setup objects over HTTP, one shape for each kind: list, read, create, update
// (PATCH, with If-Match or version) and delete. Parse, call the use case (objects.ts), render the
// view. The operationIds are the contract's; a kind's extra operations (a key's rotation, a QR
// code) are its own routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { auditOriginOf } from '../audit/record.ts';
import { etagOf, expectedVersions } from '../http/if-match.ts';
import { errorResponses } from '../http/schemas.ts';
import { adminAuth, administratorOf, type AdminAuthDeps } from './auth.ts';
import type { ObjectRow } from './object-store.ts';
import { createOf, deleteOf, getOf, listOf, updateOf, type Acting, type Entry, type ObjectDeps, type ObjectKind } from './objects.ts';
import { ADMIN_ERRORS, CHANGE_ERRORS, FILE_409, IdParams, LocationQuery, security, tags, VERSION_ERRORS, VersionQuery } from './schemas.ts';

export type ObjectRouteDeps = AdminAuthDeps & ObjectDeps;

export interface ObjectRoutes<R extends ObjectRow> {
  path: string;
  kind: ObjectKind<R, Entry>;
  operations: { list: string; get?: string; create: string; update: string; delete?: string };
  /** "call buttons" */
  plural: string;
  schemas: { View: TSchema; New: TSchema; Change: TSchema; Created?: TSchema };
  /** The object as the API shows it (never a secret). */
  view(row: R): Record<string, unknown>;
  descriptions: { create: string; update: string; delete?: string };
  /** A create that also makes a secret: the answer shows it once. */
  create?(deps: ObjectRouteDeps, acting: Acting, body: Record<string, unknown>): Promise<{ row: R; secret: Record<string, unknown> }>;
}

export const actingOf = (request: FastifyRequest): Acting => ({ actor: administratorOf(request), origin: auditOriginOf(request) });

const IN_USE = {
  description: 'managed_by_file: the file manages it; in_use: it has history (retire it with enabled false)',
  codes: ['managed_by_file', 'in_use'],
};

export function objectRoutes<R extends ObjectRow>(spec: ObjectRoutes<R>) {
  return async function routes(fastify: FastifyInstance, deps: ObjectRouteDeps): Promise<void> {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const onRequest = adminAuth(deps);
    const { View, New, Change } = spec.schemas;
    const what = spec.kind.what;
    const notFound = errorResponses({ 404: `no such ${what} (or one you do not administer)`, 422: 'id is not an id' });
    const answer = (reply: FastifyReply, row: R, extra: Record<string, unknown> = {}) => {
      void reply.header('etag', etagOf(row.version));
      return { ...spec.view(row), ...extra };
    };

    app.get(
      spec.path,
      {
        onRequest,
        schema: {
          operationId: spec.operations.list,
          tags,
          security,
          summary: `The ${spec.plural} you administer`,
          description: `Those of your organization (a location admin or a limited token: of its locations). \`location_id\`: only that location's.`,
          querystring: LocationQuery,
          response: { 200: Type.Array(View), ...ADMIN_ERRORS, ...errorResponses({ 422: 'location_id is not an id' }) },
        },
      },
      async (request) => (await listOf(deps, spec.kind, administratorOf(request), request.query.location_id)).map(spec.view),
    );

    if (spec.operations.get !== undefined) {
      app.get(
        `${spec.path}/:id`,
        {
          onRequest,
          schema: {
            operationId: spec.operations.get,
            tags,
            security,
            summary: `A ${what}`,
            description: 'With an ETag of its version. Never a secret.',
            params: IdParams,
            response: { 200: View, ...ADMIN_ERRORS, ...notFound },
          },
        },
        async (request, reply) => answer(reply, await getOf(deps, spec.kind, administratorOf(request), request.params.id)),
      );
    }

    app.post(
      spec.path,
      {
        onRequest,
        schema: {
          operationId: spec.operations.create,
          tags,
          security,
          summary: `Make a ${what}`,
          description: spec.descriptions.create,
          body: New,
          response: { 201: spec.schemas.Created ?? View, ...CHANGE_ERRORS },
        },
      },
      async (request, reply) => {
        const acting = actingOf(request);
        const body = request.body as Record<string, unknown>;
        if (spec.create !== undefined) {
          const made = await spec.create(deps, acting, body);
          return reply.code(201).send(answer(reply, made.row, made.secret));
        }
        const row = await createOf(deps, spec.kind, acting, body as Omit<Entry, 'id'>);
        return reply.code(201).send(answer(reply, row));
      },
    );

    app.patch(
      `${spec.path}/:id`,
      {
        onRequest,
        schema: {
          operationId: spec.operations.update,
          tags,
          security,
          summary: `Change a ${what}`,
          description: `${spec.descriptions.update} Send the version changed from (\`If-Match: "<version>"\` or \`version\`).`,
          params: IdParams,
          body: Change,
          response: { 200: View, ...CHANGE_ERRORS, ...notFound, ...errorResponses({ 409: FILE_409 }), ...VERSION_ERRORS },
        },
      },
      async (request, reply) => {
        const body = request.body as Partial<Entry> & { version?: number };
        const expected = expectedVersions(request, body.version);
        return answer(reply, await updateOf(deps, spec.kind, actingOf(request), request.params.id, body, expected));
      },
    );

    if (spec.operations.delete !== undefined) {
      app.delete(
        `${spec.path}/:id`,
        {
          onRequest,
          schema: {
            operationId: spec.operations.delete,
            tags,
            security,
            summary: `Delete a ${what}`,
            description:
              `${spec.descriptions.delete ?? ''} Send the version deleted from (\`If-Match: "<version>"\` or \`?version=\`). Something with history is kept: 409 in_use; retire it with \`enabled: false\`.`.trim(),
            params: IdParams,
            querystring: VersionQuery,
            response: {
              204: Type.Null({ description: 'deleted' }),
              ...ADMIN_ERRORS,
              ...VERSION_ERRORS,
              ...errorResponses({ 404: `no such ${what} (or one you do not administer)`, 409: IN_USE, 422: 'id or version is not valid' }),
            },
          },
        },
        async (request, reply) => {
          await deleteOf(deps, spec.kind, actingOf(request), request.params.id, expectedVersions(request, request.query.version));
          return reply.code(204).send(null);
        },
      );
    }
  };
}
