// Section 18's lockers and their cabinets over HTTP: list, read, create, update and delete
// (admin/object-routes.ts), and rotateLockerKey. The api_key is shown in the answer that makes or
// rotates it, never again.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminAuth } from '../admin/auth.ts';
import { rotateKeyOf } from '../admin/keys.ts';
import { actingOf, objectRoutes, type ObjectRouteDeps } from '../admin/object-routes.ts';
import { createOf, type Entry, type ObjectKind } from '../admin/objects.ts';
import { ADMIN_ERRORS, IdParams, objectSchemas, security, tags, VERSION_ERRORS, VersionQuery } from '../admin/schemas.ts';
import { sql } from '../db/sql.ts';
import { etagOf, expectedVersions } from '../http/if-match.ts';
import { BODY_ERRORS, errorResponses, RowId } from '../http/schemas.ts';
import { sha256hex } from '../http/secrets.ts';
import { makeKey } from '../provisioning/entries.ts';
import { CabinetEntry, LockerEntry } from '../provisioning/schema.ts';
import { lockerKind, type AdminLocker, type LockerRow } from './admin-kind.ts';

const AdminCabinet = Type.Object({ ...CabinetEntry.properties, id: Type.Optional(RowId) }, { title: 'LockerCabinet', additionalProperties: false });

// The file's protocol `version` is not a field here: section 18's `version` is the object's.
const entry = Object.fromEntries(Object.entries(LockerEntry.properties).filter(([k]) => k !== 'version'));
const lockerSchemas = objectSchemas(
  'Locker',
  { ...entry, cabinets: Type.Optional(Type.Array(AdminCabinet, { maxItems: 500 })) },
  {
    hidden: ['api_key'],
    fixed: ['api_key'],
    description: 'a locker and its cabinets; its api_key (L7 and its MQTT password) is shown only when made or rotated',
  },
);
const ApiKey = { api_key: Type.String({ description: "the locker's api_key: shown in this answer only" }) };
export const LockerSchemas = {
  ...lockerSchemas,
  Created: Type.Object({ ...lockerSchemas.View.properties, ...ApiKey }, { title: 'CreatedLocker' }),
  Rotated: Type.Object({ ...lockerSchemas.View.properties, ...ApiKey }, { title: 'RotatedLocker' }),
};

const kind = lockerKind as unknown as ObjectKind<LockerRow, Entry>;
const view = (row: LockerRow) => row as unknown as Record<string, unknown>;

export const lockerAdminRoutes = objectRoutes<LockerRow>({
  path: '/api/admin/lockers',
  kind,
  plural: 'lockers',
  operations: { list: 'listLockers', get: 'getLocker', create: 'createLocker', update: 'updateLocker', delete: 'deleteLocker' },
  schemas: LockerSchemas,
  view,
  descriptions: {
    create: "Its `api_key` is made by the service when not given and shown in this answer only. Cabinets' ids are the service's when not given.",
    update:
      '`cabinets`, when sent, is the whole set: a cabinet is matched by id (else by key), a new one made, one left out deleted (409 in_use ' +
      'if orders refer to it: disable it instead). `enabled: false` refuses its next call (L7) and MQTT sign-in.',
    delete: 'A locker with orders is kept.',
  },
  create: async (deps, acting, body) => {
    const apiKey = typeof body.api_key === 'string' ? body.api_key : makeKey();
    const row = await createOf(deps, kind, acting, { ...(body as Omit<AdminLocker, 'id'>), api_key: apiKey });
    return { row, secret: { api_key: apiKey } };
  },
});

export async function lockerKeyRoutes(fastify: FastifyInstance, deps: ObjectRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/admin/lockers/:id/key',
    {
      onRequest: adminAuth(deps),
      schema: {
        operationId: 'rotateLockerKey',
        tags,
        security,
        summary: "Make a locker's api_key anew",
        description:
          'A new api_key, shown in this answer only. The old one is refused at its next use (L7, MQTT sign-in) on every instance. Send the ' +
          'version (`If-Match` or `?version=`).',
        params: IdParams,
        querystring: VersionQuery,
        response: {
          200: LockerSchemas.Rotated,
          ...ADMIN_ERRORS,
          ...VERSION_ERRORS,
          ...errorResponses({
            ...BODY_ERRORS,
            404: 'no such locker (or one you do not administer)',
            409: { description: 'managed_by_file: the file holds its key', codes: ['managed_by_file'] },
            422: 'id is not valid',
          }),
        },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.query.version);
      const { row, key } = await rotateKeyOf(deps, kind, actingOf(request), request.params.id, expected, async (tx, id, made) => {
        await tx.run(sql`UPDATE lockers SET api_key = ${made}, api_key_hash = ${sha256hex(made)} WHERE id = ${id}`);
      });
      void reply.header('etag', etagOf(row.version));
      return { ...view(row), api_key: key } as never;
    },
  );
}
