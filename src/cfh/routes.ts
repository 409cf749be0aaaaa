// Call for Help over HTTP (C0-C5): customers' devices create and cancel requests, chat integrations
// claim, go and complete them, customer pages poll the status. Bearer tokens with the cfh scope;
// each route parses, calls its use case (requests.ts) and renders the answer.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { actorOf, bearerAuth, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { customerOrBearer } from './access.ts';
import { BODY_ERRORS, errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { cancelRequest, claimRequest, completeRequest, createRequest, markOnTheWay, requestStatus, type CfhDeps } from './requests.ts';
import { staffNameFor, type Staff } from './rules.ts';
import { CancelBody, CfhRequestRecord, CfhStatusView, CompleteBody, CreateBody, requestFromOf, StaffActionBody, Success, TrackingQuery } from './schemas.ts';
import { toRecord, toStatusView } from './views.ts';

export interface CfhRouteDeps extends CfhDeps {
  /** The bearer-token lookup the app shares between features (one cache). */
  apiTokens: ApiTokens;
}

const security = [{ bearerToken: [] }];
/** C4, C5: a bearer token, or none (the message_id is the credential). */
const customerSecurity: Record<string, string[]>[] = [{ bearerToken: [] }, {}];
const tags = ['callforhelp'];
const queryErrors = errorResponses({
  401: 'missing or invalid bearer token',
  403: 'the token lacks the cfh scope',
  422: 'the body or query is invalid',
  ...SERVICE_ERRORS,
});
const errors = { ...queryErrors, ...errorResponses(BODY_ERRORS) };
const notFoundResponse = errorResponses({ 404: "no such request (for this token's organization)" });
const outcomeErrors = errorResponses({ 422: 'the body is invalid, or customer_status is not an outcome of the location (when it has outcomes)' });

function staffOf(body: StaffActionBody): Staff {
  return { name: body.claimed_by, userId: body.claimed_by_user_id, channelId: body.channel_id, from: requestFromOf(body.request_from) };
}

export async function cfhRoutes(fastify: FastifyInstance, deps: CfhRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = bearerAuth(deps.apiTokens, 'cfh');
  const customerOrStaff = customerOrBearer(deps.apiTokens, 'cfh');

  app.post(
    '/api/callforhelp/requests',
    {
      onRequest,
      schema: {
        operationId: 'createCfhRequest',
        tags,
        security,
        summary: 'Create a Call for Help request (call button, QR-code page, kiosk)',
        body: CreateBody,
        response: { 201: CfhRequestRecord, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const row = await createRequest(deps, tokenActorOf(request), {
        locationId: body.location_id,
        optionId: body.option_id,
        deviceId: body.device_id ?? null,
        displayId: body.display_id ?? null,
        callbuttonId: body.callbutton_id ?? null,
        chatChannelId: body.chat_channel_id ?? null,
      });
      return reply.code(201).send(toRecord(row));
    },
  );

  app.post(
    '/api/callforhelp/claim',
    {
      onRequest,
      schema: {
        operationId: 'claimCfhRequest',
        tags,
        security,
        summary: 'Claim a request: of concurrent claims exactly one succeeds',
        body: StaffActionBody,
        response: { 200: Success, ...errors, ...notFoundResponse },
      },
    },
    async (request) => {
      return { success: await claimRequest(deps, tokenActorOf(request), request.body.message_id, staffOf(request.body)) };
    },
  );

  app.post(
    '/api/callforhelp/on_the_way',
    {
      onRequest,
      schema: {
        operationId: 'markCfhOnTheWay',
        tags,
        security,
        summary: 'Mark the employee on the way (the claimer, or anyone on an unclaimed request, which it claims)',
        body: StaffActionBody,
        response: { 200: Success, ...errors, ...notFoundResponse },
      },
    },
    async (request) => {
      return { success: await markOnTheWay(deps, tokenActorOf(request), request.body.message_id, staffOf(request.body)) };
    },
  );

  app.post(
    '/api/callforhelp/complete',
    {
      onRequest,
      schema: {
        operationId: 'completeCfhRequest',
        tags,
        security,
        summary: 'Complete a request; customer_status becomes its completion_reason',
        body: CompleteBody,
        response: { 200: Success, ...errors, ...notFoundResponse, ...outcomeErrors },
      },
    },
    async (request) => {
      const body = request.body;
      return { success: await completeRequest(deps, tokenActorOf(request), body.message_id, staffOf(body), body.customer_status) };
    },
  );

  app.post(
    '/api/callforhelp/cancel',
    {
      onRequest: customerOrStaff,
      config: { capabilityRoute: true },
      schema: {
        operationId: 'cancelCfhRequest',
        tags,
        security: customerSecurity,
        summary: 'The customer cancels the request (with a bearer token, or with none: the message_id is the credential)',
        body: CancelBody,
        response: {
          200: CfhRequestRecord,
          ...errors,
          ...notFoundResponse,
          ...errorResponses({ 409: { description: 'the request is already completed', codes: ['cfh_request_completed'] } }),
        },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const record = toRecord(await cancelRequest(deps, actor, request.body.message_id));
      if (actor.kind !== 'customer') return record;
      // The customer sees the claimer's name as the location shows it to customers (as in C5).
      const status = await requestStatus(deps, actor, request.body.message_id);
      return { ...record, claimed_by: staffNameFor(record.claimed_by, status.staff_name_format) };
    },
  );

  app.get(
    '/api/callforhelp/v1/tracking',
    {
      onRequest: customerOrStaff,
      config: { capabilityRoute: true },
      schema: {
        operationId: 'getCfhRequest',
        tags,
        security: customerSecurity,
        summary: "Status of a request, as a customer page shows it (without a token, the claimer's name in the location's staff_name_format)",
        querystring: TrackingQuery,
        response: { 200: CfhStatusView, ...queryErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      return toStatusView(await requestStatus(deps, actor, request.query.message_id), actor.kind === 'customer' ? 'customer' : 'staff');
    },
  );
}
