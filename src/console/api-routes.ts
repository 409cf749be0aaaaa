// The console pages' reads, staff actions and live stream, all with the session's identity: reads
// need a live session; every state-changing call also passes the same-origin and CSRF checks
// (guard.ts). Each route parses, calls a use case (pages.ts, actions.ts) and sends what it gives.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, oneOf, RowId, SERVICE_ERRORS, STREAM_429, StorableText } from '../http/schemas.ts';
import { SpeakableText } from '../radio/schemas.ts';
import { ReportQuery } from '../reports/schemas.ts';
import { csvStream } from '../reports/views.ts';
import { announce, cabinetAction, CFH_STEPS, cfhStep, orderAction, redeliver } from './actions.ts';
import { answersUncached, changingWithSession, personAuth, personOf, sessionValueOf } from '../people/guard.ts';
import { resumeSession } from '../people/sessions.ts';
import { openConsoleStream } from './live.ts';
import { devicesPage, lockersPage, queuePage, radioPage, reportsPage, requestsCsv, playedAudio, visibleLocation, webhooksPage } from './pages.ts';
import type { ConsoleRouteDeps } from './routes.ts';

type ApiDeps = ConsoleRouteDeps;

const LocationParams = Type.Object({ location_id: RowId });
const PAGES = ['queue', 'lockers', 'devices', 'radio', 'webhooks'] as const;

export async function consoleApiRoutes(fastify: FastifyInstance, deps: ApiDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const reading = personAuth(deps);
  const changing = changingWithSession(deps);
  answersUncached(app);

  app.get(
    '/console/api/locations/:location_id/:page',
    {
      onRequest: reading,
      schema: { hide: true, params: Type.Object({ location_id: RowId, page: oneOf(PAGES) }) },
    },
    async (request) => {
      const identity = personOf(request);
      const { location_id: id, page } = request.params;
      if (page === 'queue') return queuePage(deps, identity, id);
      if (page === 'lockers') return lockersPage(deps, identity, id);
      if (page === 'devices') return devicesPage(deps, identity, id);
      if (page === 'radio') return radioPage(deps, identity, id);
      return webhooksPage(deps, identity, id);
    },
  );

  const Range = Type.Object({ from: ReportQuery.properties.from, to: ReportQuery.properties.to });
  app.get(
    '/console/api/locations/:location_id/reports',
    {
      onRequest: reading,
      schema: { hide: true, params: LocationParams, querystring: Range },
    },
    async (request) => reportsPage(deps, personOf(request), { location_id: request.params.location_id, ...request.query }),
  );

  app.get(
    '/console/api/locations/:location_id/requests.csv',
    {
      onRequest: reading,
      schema: { hide: true, params: LocationParams, querystring: Range },
    },
    async (request, reply) => {
      const query = { location_id: request.params.location_id, ...request.query };
      const pages = await requestsCsv(deps, personOf(request), query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="cfh-requests-${query.location_id}-${query.from}-${query.to}.csv"`)
        .send(csvStream(pages) as unknown as string);
    },
  );

  app.get(
    '/console/api/locations/:location_id/stream',
    {
      onRequest: personAuth(deps, { restarts: 'never' }),
      schema: {
        operationId: 'streamConsoleChanges',
        tags: ['console'],
        security: [{ session: [] }],
        summary: 'What changed, live, for the console pages of a location',
        description:
          'Server-Sent Events for the console (contract section 15): `ready` once, then a `change` event `{ "kinds", "statuses" }` ' +
          '(event types such as `callforhelp`, `locker`, `radio`, `device`, and `type:status` pairs) after each batch of the ' +
          "location's committed events, from any instance; the page then reads its data again. A comment line every 20 seconds. " +
          "Needs a person's session cookie (section 17); a location the session may not see: 404, one where its role may not work: 403. The stream ends when its session does " +
          '(signed out, or 12 hours without anything a person did); it does not itself keep the session alive.',
        params: LocationParams,
        produces: ['text/event-stream'],
        response: {
          200: Type.String({ description: 'text/event-stream' }),
          ...errorResponses({
            401: 'no live console session',
            404: 'the location is not one the session may see',
            422: 'the location id is not valid',
            ...SERVICE_ERRORS,
            429: STREAM_429,
          }),
        },
      },
    },
    async (request, reply) => {
      const identity = personOf(request);
      await visibleLocation(deps, identity, request.params.location_id);
      const cookie = sessionValueOf(request) ?? '';
      await openConsoleStream(deps.live, request, reply, {
        locationId: request.params.location_id,
        sessionId: identity.sessionId,
        sessionLive: async () => (await resumeSession(deps, cookie, false)) !== null,
      });
    },
  );

  app.get(
    '/console/api/radio/:edge_id/messages/:message_id/audio',
    {
      onRequest: reading,
      schema: {
        hide: true,
        params: Type.Object({ edge_id: Type.String({ minLength: 1, maxLength: 200 }), message_id: Type.String({ minLength: 1, maxLength: 200 }) }),
      },
    },
    async (request, reply) => {
      const wav = await playedAudio(deps, personOf(request), request.params.edge_id, request.params.message_id);
      return reply.type('audio/wav').header('cache-control', 'private, max-age=3600').send(wav);
    },
  );

  app.post(
    '/console/api/cfh/:message_id/:step',
    {
      onRequest: changing,
      schema: {
        hide: true,
        params: Type.Object({ message_id: Type.String({ minLength: 1, maxLength: 200 }), step: oneOf(CFH_STEPS) }),
        body: Type.Optional(Type.Object({ outcome: Type.Optional(StorableText({ maxLength: 200 })) })),
      },
    },
    async (request) => cfhStep(deps, personOf(request), request.params.message_id, request.params.step, request.body?.outcome ?? null),
  );

  app.post(
    '/console/api/cabinets/:cabinet_id/:action',
    {
      onRequest: changing,
      schema: {
        hide: true,
        params: Type.Object({ cabinet_id: RowId, action: oneOf(['open', 'close', 'disable', 'enable'] as const) }),
        body: Type.Optional(Type.Object({ reason: Type.Optional(StorableText({ maxLength: 200 })), rear: Type.Optional(Type.Boolean()) })),
      },
    },
    async (request) => {
      const cabinet = await cabinetAction(deps, personOf(request), request.params.cabinet_id, request.params.action, {
        reason: request.body?.reason?.trim() || null,
        rear: request.body?.rear ?? false,
      });
      return { id: cabinet.id, state: cabinet.state, enabled: cabinet.enabled, occupied: cabinet.occupied };
    },
  );

  app.post(
    '/console/api/orders/:id/:action',
    {
      onRequest: changing,
      schema: { hide: true, params: Type.Object({ id: RowId, action: oneOf(['cancel', 'open_code'] as const) }) },
    },
    async (request) => orderAction(deps, personOf(request), request.params.id, request.params.action),
  );

  app.post(
    '/console/api/radio/:edge_id/announce',
    {
      onRequest: changing,
      schema: {
        hide: true,
        params: Type.Object({ edge_id: Type.String({ minLength: 1, maxLength: 200 }) }),
        // R1's text: the announcement takes R1's path (a lone surrogate would reach jsonb).
        body: Type.Object({ text: SpeakableText('The announcement') }),
      },
    },
    async (request) => {
      const { messageId } = await announce(deps, personOf(request), request.params.edge_id, request.body.text);
      return { message_id: messageId };
    },
  );

  app.post(
    '/console/api/webhooks/deliveries/:delivery_id/redeliver',
    {
      onRequest: changing,
      schema: { hide: true, params: Type.Object({ delivery_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }) },
    },
    async (request, reply) => reply.code(202).send(await redeliver(deps, personOf(request), request.params.delivery_id)),
  );
}
