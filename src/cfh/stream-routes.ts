// C6 and C8 over HTTP: Server-Sent Events of a request's status (customer access as C5) and of a
// location's requests (bearer token, cfh scope). Errors before the stream opens are JSON answers.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { actorOf, bearerAuth, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { errorResponses, SERVICE_ERRORS, STREAM_429 } from '../http/schemas.ts';
import { customerOrBearer } from './access.ts';
import { eventStream, StreamQuery, TrackingStreamQuery } from './schemas-buttons-displays-list-streams.ts';
import { streamLocation, streamRequest, type StreamDeps } from './streams.ts';

export interface CfhStreamRouteDeps extends StreamDeps {
  apiTokens: ApiTokens;
}

const tags = ['callforhelp'];
const authErrors = {
  401: 'missing or invalid bearer token',
  403: 'the token lacks the cfh scope',
  422: 'the query is invalid',
  ...SERVICE_ERRORS,
  429: STREAM_429,
};

export async function cfhStreamRoutes(fastify: FastifyInstance, deps: CfhStreamRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/api/callforhelp/v1/tracking/stream',
    {
      onRequest: customerOrBearer(deps.apiTokens, 'cfh'),
      config: { capabilityRoute: true },
      schema: {
        operationId: 'streamCfhRequest',
        tags,
        security: [{ bearerToken: [] }, {}],
        summary: 'Live status of a request (Server-Sent Events): a `status` event with the status view at once and after every change',
        description:
          "As C5: with a bearer token (cfh scope), or none (the message_id is the credential; the claimer's name in the " +
          "location's staff_name_format). A comment line at least every 25 seconds. Any instance sends the changes any instance made.",
        querystring: TrackingStreamQuery,
        produces: ['text/event-stream'],
        response: { 200: eventStream('`event: status`, `data:` the status view (JSON)'), ...errorResponses({ ...authErrors, 404: 'no such request' }) },
      },
    },
    async (request, reply) => {
      await streamRequest(deps, request, reply, actorOf(request), request.query.message_id);
    },
  );

  app.get(
    '/api/callforhelp/requests/stream',
    {
      onRequest: bearerAuth(deps.apiTokens, 'cfh'),
      schema: {
        operationId: 'streamCfhRequests',
        tags,
        security: [{ bearerToken: [] }],
        summary: "Live changes of a location's requests (Server-Sent Events): a `request` event with the record per change",
        description:
          'Each committed Call for Help event of the location (created, escalated, reminder, claimed, on_the_way, completed, ' +
          "cancelled, timed_out), as C7's record of the request with its staff_action. A comment line at least every 25 seconds. " +
          "A location of another organization (or outside the token's locations): 404.",
        querystring: StreamQuery,
        produces: ['text/event-stream'],
        response: {
          200: eventStream('`event: request`, `data:` the request record with staff_action (JSON)'),
          ...errorResponses({ ...authErrors, 404: 'no such location (for this token)' }),
        },
      },
    },
    async (request, reply) => {
      await streamLocation(deps, request, reply, tokenActorOf(request), request.query.location_id);
    },
  );
}
