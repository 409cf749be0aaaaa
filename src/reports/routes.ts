// Reports over HTTP (P1-P3, contract section 16): bearer tokens with the reports scope; each
// route parses, calls its use case (reports.ts) and renders the answer.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerAuth, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { cfhReport, exportRequests, lockerReport, type ReportDeps } from './reports.ts';
import { CfhReport, LockerReport, REPORT_ERRORS, ReportQuery } from './schemas.ts';
import { csvStream } from './views.ts';

export interface ReportRouteDeps extends ReportDeps {
  /** The bearer-token lookup the app shares between features (one cache). */
  apiTokens: ApiTokens;
}

const security = [{ bearerToken: [] }];
const tags = ['reports'];
const RANGE =
  "`from` and `to` are dates (YYYY-MM-DD), both included, with day boundaries in the location's `time_zone` (UTC when it has none). " +
  '`from` after `to`, an unparseable date or a range of more than 3700 days: 422. A location of another organization: 404.';

export async function reportRoutes(fastify: FastifyInstance, deps: ReportRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = bearerAuth(deps.apiTokens, 'reports');

  app.get(
    '/api/reports/cfh',
    {
      onRequest,
      schema: {
        operationId: 'getCfhReport',
        tags,
        security,
        summary: 'Call for Help of a location over a range of days',
        description:
          `${RANGE} Requests count on the day they were created; durations are seconds from the creation (median and 90th ` +
          'percentile, interpolated). `escalations` are 0 until requests escalate. See docs/reports.md.',
        querystring: ReportQuery,
        response: { 200: CfhReport, ...REPORT_ERRORS },
      },
    },
    async (request) => cfhReport(deps, tokenActorOf(request), request.query),
  );

  app.get(
    '/api/reports/cfh/requests.csv',
    {
      onRequest,
      schema: {
        operationId: 'exportCfhRequests',
        tags,
        security,
        summary: 'The requests of a location over a range of days, as CSV',
        description:
          `${RANGE} One row per request (oldest first) with every field of its record, its option's text, its source and its ` +
          "durations in seconds, after a header row. Every text cell is quoted; one that starts with = + - @ gets a leading ' " +
          'so spreadsheets do not run it.',
        querystring: ReportQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'text/csv; charset=utf-8' }), ...REPORT_ERRORS },
      },
    },
    async (request, reply) => {
      const pages = await exportRequests(deps, tokenActorOf(request), request.query);
      const name = `cfh-requests-${request.query.location_id}-${request.query.from}-${request.query.to}.csv`;
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          // A stream is sent as it is (no serializer); the 200 schema is what the document shows.
          .send(csvStream(pages) as unknown as string)
      );
    },
  );

  app.get(
    '/api/reports/lockers',
    {
      onRequest,
      schema: {
        operationId: 'getLockerReport',
        tags,
        security,
        summary: 'Locker orders of a location over a range of days',
        description:
          `${RANGE} Orders count on the day they were created, with what became of them; time_to_ready and time_to_pickup are ` +
          'seconds from the creation to ready and to completion. occupancy: the time-weighted average fraction of the ' +
          "location's cabinets holding an order over the range (up to now).",
        querystring: ReportQuery,
        response: { 200: LockerReport, ...REPORT_ERRORS },
      },
    },
    async (request) => lockerReport(deps, tokenActorOf(request), request.query),
  );
}
