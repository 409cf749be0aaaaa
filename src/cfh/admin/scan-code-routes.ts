// Section 19's scan codes as section 18 administers them: an option, button or display made with
// `require_scan: true` gets its code in the create's answer, and rotateScanCode makes a new one (or
// its first, when require_scan was turned on by an update), shown in that answer only. The old
// code is refused at its next scan on every instance, since each scan reads the stored digest.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { adminAuth } from '../../admin/auth.ts';
import { rotateKeyOf } from '../../admin/keys.ts';
import { actingOf, type ObjectRouteDeps } from '../../admin/object-routes.ts';
import { createOf, type Acting, type Entry, type ObjectKind } from '../../admin/objects.ts';
import type { ObjectRow } from '../../admin/object-store.ts';
import { ADMIN_ERRORS, IdParams, security, tags, VERSION_ERRORS, VersionQuery } from '../../admin/schemas.ts';
import { sql } from '../../db/sql.ts';
import { etagOf, expectedVersions } from '../../http/if-match.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { newScanCode, scanCodeDigest } from '../scan-codes.ts';
import { ScanCode } from './schemas.ts';

/** A create that makes the object's scan code with it when it asks for one. */
export async function createScanned<R extends ObjectRow>(deps: ObjectRouteDeps, kind: ObjectKind<R, Entry>, acting: Acting, body: Record<string, unknown>) {
  const scanCode = body.require_scan === true ? newScanCode() : undefined;
  const row = await createOf(deps, kind, acting, { ...body, ...(scanCode === undefined ? {} : { scan_code: scanCode }) } as Omit<Entry, 'id'>);
  return { row, secret: scanCode === undefined ? {} : { scan_code: scanCode } };
}

export interface Scannable {
  path: string;
  kind: ObjectKind<ObjectRow, Entry>;
  operationId: string;
  View: TSchema & { properties: Record<string, TSchema> };
  title: string;
}

export function scanCodeRoutes(scannables: readonly Scannable[]) {
  return async function routes(fastify: FastifyInstance, deps: ObjectRouteDeps): Promise<void> {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const onRequest = adminAuth(deps);
    for (const s of scannables) {
      const what = s.kind.what;
      app.post(
        `${s.path}/:id/scan_code`,
        {
          onRequest,
          schema: {
            operationId: s.operationId,
            tags,
            security,
            summary: `Make a ${what}'s scan code anew`,
            description:
              `A scan code is shown only when made or rotated (sections 18 and 19): this makes a new one for the ${what}, shown in this answer ` +
              'only; the old one is refused at its next scan. Send the version (`If-Match` or `?version=`).',
            params: IdParams,
            querystring: VersionQuery,
            response: {
              200: Type.Object({ ...s.View.properties, scan_code: ScanCode }, { title: s.title }),
              ...ADMIN_ERRORS,
              ...VERSION_ERRORS,
              ...errorResponses({
                ...BODY_ERRORS,
                404: `no such ${what} (or one you do not administer)`,
                409: { description: 'managed_by_file: the file holds it (`npm run scan-code` rotates its code)', codes: ['managed_by_file'] },
                422: 'id is not an id',
              }),
            },
          },
        },
        async (request, reply) => {
          const expected = expectedVersions(request, request.query.version);
          const table = sql.raw(s.kind.source.table);
          const { row, key } = await rotateKeyOf(
            deps,
            s.kind,
            actingOf(request),
            request.params.id,
            expected,
            async (tx, id, code) => {
              await tx.run(sql`UPDATE ${table} SET scan_code_hash = ${scanCodeDigest(code)} WHERE id = ${id}`);
            },
            { make: newScanCode, name: 'scan_code' },
          );
          void reply.header('etag', etagOf(row.version));
          return { ...(row as unknown as Record<string, unknown>), scan_code: key } as never;
        },
      );
    }
  };
}
