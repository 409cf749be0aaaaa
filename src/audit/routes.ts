// The audit log over HTTP (section 18): listAuditEntries and exportAuditEntries, with a person's
// session or a token with the admin scope. There is no operation that changes or deletes an entry.
import type { FastifyInstance } from 'fastify';
import { answersUncached } from '../people/guard.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/db.ts';
import { adminAuth, administratorOf, type AdminAuthDeps } from '../admin/auth.ts';
import { exportAuditEntries, listAuditEntries, type AuditDeps } from './audit.ts';
import { AUDIT_ERRORS, AuditEntries, AuditExportQuery, AuditListQuery } from './schemas.ts';
import { auditCsvStream, auditEntryView } from './views.ts';

export interface AuditRouteDeps extends AdminAuthDeps, AuditDeps {
  db: Db;
}

const tags = ['administration'];
const security: Record<string, string[]>[] = [{ session: [] }, { bearerToken: [] }];
const WHO =
  'An org_admin, or an admin token of the whole organization, reads every entry of the organization (organization-wide ones ' +
  'too); a location_admin, or a token limited to locations, the entries of the locations it administers. With `location_id`: ' +
  'that location only (out of reach 404; one the caller works at without administering it 403).';

export async function auditRoutes(fastify: FastifyInstance, deps: AuditRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  answersUncached(app);

  app.get(
    '/api/admin/audit',
    {
      onRequest,
      schema: {
        operationId: 'listAuditEntries',
        tags,
        security,
        summary: 'The audit log, newest first',
        description:
          `${WHO} Sign-ins, sign-outs and ended sessions, and every change to people, memberships, service accounts, tokens, store ` +
          'devices, SSO mappings, settings and setup objects, and each provisioning file applied. Pages of `limit`; the next page ' +
          'is `cursor` = `next_cursor`. Entries are never changed; they are deleted after AUDIT_RETENTION_DAYS.',
        querystring: AuditListQuery,
        response: { 200: AuditEntries, ...AUDIT_ERRORS },
      },
    },
    async (request) => {
      const page = await listAuditEntries(deps, administratorOf(request), request.query);
      return { entries: page.entries.map(auditEntryView), next_cursor: page.nextCursor };
    },
  );

  app.get(
    '/api/admin/audit.csv',
    {
      onRequest,
      schema: {
        operationId: 'exportAuditEntries',
        tags,
        security,
        summary: 'The audit log as CSV',
        description:
          `${WHO} Every entry of the filters, newest first, after a header row: id, at, actor_type, actor_id, actor_name, action, ` +
          'target_type, target_id, target_name, organization_id, location_id, changes (its JSON), ip, user_agent. Every text cell is ' +
          "quoted; one that starts with = + - @ gets a leading ' so spreadsheets do not run it.",
        querystring: AuditExportQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv; charset=utf-8' }), ...AUDIT_ERRORS },
      },
    },
    async (request, reply) => {
      const pages = await exportAuditEntries(deps, administratorOf(request), request.query);
      const where = request.query.location_id === undefined ? 'organization' : `location-${request.query.location_id}`;
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="audit-${where}.csv"`)
          // A stream is sent as it is (no serializer); the 200 schema is what the document shows.
          .send(auditCsvStream(pages) as unknown as string)
      );
    },
  );
}
