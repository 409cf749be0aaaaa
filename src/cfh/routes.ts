// Call for Help over HTTP (C0-C5): customers' devices create and cancel requests, chat integrations
// claim, go and complete them, customer pages poll the status. Bearer tokens with the cfh scope;
// each route parses, calls its use case (requests.ts) and renders the answer.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { bearerAuth, principalOf, type ApiTokens } from '../http/auth.ts';
import { BODY_ERRORS, errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { cancelRequest, claimRequest, completeRequest, createRequest, markOnTheWay, requestStatus, type CfhDeps } from './requests.ts';
import type { Staff } from './rules.ts';
import { CancelBody, CfhRequestRecord, CfhStatusView, CompleteBody, CreateBody, StaffActionBody, Success, TrackingQuery } from './schemas.ts';
import { toRecord, toStatusView } from './views.ts';

export interface CfhRouteDeps extends CfhDeps {
  /** The bearer-token lookup the app shares between features (one cache). */
  apiTokens: ApiTokens;
}

const security = [{ bearerToken: [] }];
const tags = ['callforhelp'];
const queryErrors = errorResponses({
  401: 'missing or invalid bearer token',
  403: 'the token lacks the cfh scope',
  422: 'the body or query is invalid',
  ...SERVICE_ERRORS,
});
const errors = { ...queryErrors, ...errorResponses(BODY_ERRORS) };
const notFoundResponse = errorResponses({ 404: 'no such request (for this token\'s organization)' });

function staffOf(body: StaffActionBody): Staff {
  return { name: body.claimed_by, userId: body.claimed_by_user_id, channelId: body.channel_id, from: body.request_from ?? 'provider_a' };
}

export async function cfhRoutes(fastify: FastifyInstance, deps: CfhRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = bearerAuth(deps.apiTokens, 'cfh');

  app.post('/api/callforhelp/requests', {
    onRequest,
    schema: {
      operationId: 'createCfhRequest', tags, security,
      summary: 'Create a Call for Help request (call button, QR-code page, kiosk)',
      body: CreateBody,
      response: { 201: CfhRequestRecord, ...errors },
    },
  }, async (request, reply) => {
    const body = request.body;
    const row = await createRequest(deps, principalOf(request), {
      locationId: body.location_id, optionId: body.option_id,
      deviceId: body.device_id ?? null, displayId: body.display_id ?? null,
      callbuttonId: body.callbutton_id ?? null, chatChannelId: body.chat_channel_id ?? null,
    });
    return reply.code(201).send(toRecord(row));
  });

  app.post('/api/callforhelp/claim', {
    onRequest,
    schema: {
      operationId: 'claimCfhRequest', tags, security,
      summary: 'Claim a request: of concurrent claims exactly one succeeds',
      body: StaffActionBody,
      response: { 200: Success, ...errors, ...notFoundResponse },
    },
  }, async (request) => {
    return { success: await claimRequest(deps, principalOf(request), request.body.message_id, staffOf(request.body)) };
  });

  app.post('/api/callforhelp/on_the_way', {
    onRequest,
    schema: {
      operationId: 'markCfhOnTheWay', tags, security,
      summary: 'Mark the employee on the way (the claimer, or anyone on an unclaimed request, which it claims)',
      body: StaffActionBody,
      response: { 200: Success, ...errors, ...notFoundResponse },
    },
  }, async (request) => {
    return { success: await markOnTheWay(deps, principalOf(request), request.body.message_id, staffOf(request.body)) };
  });

  app.post('/api/callforhelp/complete', {
    onRequest,
    schema: {
      operationId: 'completeCfhRequest', tags, security,
      summary: 'Complete a request; customer_status becomes its completion_reason',
      body: CompleteBody,
      response: { 200: Success, ...errors, ...notFoundResponse },
    },
  }, async (request) => {
    const body = request.body;
    return { success: await completeRequest(deps, principalOf(request), body.message_id, staffOf(body), body.customer_status) };
  });

  app.post('/api/callforhelp/cancel', {
    onRequest,
    schema: {
      operationId: 'cancelCfhRequest', tags, security,
      summary: 'The customer cancels the request',
      body: CancelBody,
      response: {
        200: CfhRequestRecord, ...errors, ...notFoundResponse,
        ...errorResponses({ 409: { description: 'the request is already completed', codes: ['cfh_request_completed'] } }),
      },
    },
  }, async (request) => {
    return toRecord(await cancelRequest(deps, principalOf(request), request.body.message_id));
  });

  app.get('/api/callforhelp/v1/tracking', {
    onRequest,
    schema: {
      operationId: 'getCfhRequest', tags, security,
      summary: 'Real-time status of a request, as a customer page shows it',
      querystring: TrackingQuery,
      response: { 200: CfhStatusView, ...queryErrors, ...notFoundResponse },
    },
  }, async (request) => {
    return toStatusView(await requestStatus(deps, principalOf(request).organizationId, request.query.message_id));
  });
}
