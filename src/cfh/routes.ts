// Call for Help over HTTP (C0-C5): customers' devices create and cancel requests, chat integrations
// claim, go and complete them, customer pages poll the status. Bearer tokens with the cfh scope;
// everything is looked up within the token's organization.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../app.ts';
import { bearerAuth, type Principal } from '../http/auth.ts';
import { AppError, notFound } from '../http/errors.ts';
import { creationProblems, cancelOfClosed, decideOnTheWay, newMessageId, toRecord, toStatusView, type Staff } from './rules.ts';
import {
  CancelBody, CfhRequestRecord, CfhStatusView, CompleteBody, CreateBody, ErrorBody, StaffActionBody, Success, TrackingQuery,
  type RequestFrom,
} from './schemas.ts';
import * as store from './store.ts';

const security = [{ bearerToken: [] }];
const tags = ['callforhelp'];
const queryErrors = {
  401: { ...ErrorBody, description: 'missing or invalid bearer token' },
  403: { ...ErrorBody, description: 'the token lacks the cfh scope' },
  422: { ...ErrorBody, description: 'the body or query is invalid' },
  429: { ...ErrorBody, description: 'too many refused requests from this client; see Retry-After' },
  503: { ...ErrorBody, description: 'the database is unavailable; see Retry-After' },
};
const errors = {
  ...queryErrors,
  400: { ...ErrorBody, description: 'the body is not JSON' },
  413: { ...ErrorBody, description: 'the body is too large' },
  415: { ...ErrorBody, description: 'unsupported content type (send application/json)' },
};
const notFoundResponse = { 404: { ...ErrorBody, description: 'no such request (for this token\'s organization)' } };

function principalOf(request: FastifyRequest): Principal {
  // Set by the route's bearerAuth hook, which refuses the request otherwise.
  return request.principal as Principal;
}

function staffOf(body: StaffActionBody): Staff {
  return { name: body.claimed_by, userId: body.claimed_by_user_id, channelId: body.channel_id, from: (body.request_from ?? 'provider_a') as RequestFrom };
}

function found<T>(result: T | null): T {
  if (result === null) throw notFound('CFH request');
  return result;
}

export async function cfhRoutes(fastify: FastifyInstance, deps: Deps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = bearerAuth(fastify.apiTokens, 'cfh');

  app.post('/api/callforhelp/requests', {
    onRequest,
    schema: {
      operationId: 'createCfhRequest', tags, security,
      summary: 'Create a Call for Help request (call button, QR-code page, kiosk)',
      body: CreateBody,
      response: { 201: CfhRequestRecord, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId, tokenId } = principalOf(request);
    const body = request.body;
    const inserted = await store.insertRequest(deps.db, {
      organizationId, tokenId, messageId: newMessageId(),
      locationId: body.location_id, optionId: body.option_id,
      deviceId: body.device_id ?? null, displayId: body.display_id ?? null,
      callbuttonId: body.callbutton_id ?? null, chatChannelId: body.chat_channel_id ?? null,
      defaultTimeoutSeconds: deps.config.cfhTimeoutSeconds,
    }, deps.clock.now());
    const problems = creationProblems({ location: inserted.locationFound, option: inserted.optionFound });
    if (problems !== null) {
      const message = Object.entries(problems).map(([field, list]) => `${field}: ${list.join(', ')}`).join('; ');
      throw new AppError(422, 'validation_failed', message, { errors: problems });
    }
    if (inserted.row === null) throw new Error('a CFH request that passed its checks was not inserted');
    const row = inserted.row;
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
    const { organizationId, tokenId } = principalOf(request);
    const success = found(await store.claim(deps.db, organizationId, request.body.message_id, staffOf(request.body), tokenId, deps.clock.now()));
    return { success };
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
    const { organizationId, tokenId } = principalOf(request);
    const staff = staffOf(request.body);
    const now = deps.clock.now();
    const success = await deps.db.tx(async (q) => {
      const state = found(await store.lockForOnTheWay(q, organizationId, request.body.message_id));
      const decision = decideOnTheWay(state, staff);
      if (!decision.allowed) return false;
      await store.writeOnTheWay(q, state.id, decision, staff, tokenId, now);
      return true;
    });
    return { success };
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
    const { organizationId, tokenId } = principalOf(request);
    const body = request.body;
    const success = found(await store.complete(deps.db, organizationId, body.message_id, staffOf(body), body.customer_status, tokenId, deps.clock.now()));
    return { success };
  });

  app.post('/api/callforhelp/cancel', {
    onRequest,
    schema: {
      operationId: 'cancelCfhRequest', tags, security,
      summary: 'The customer cancels the request',
      body: CancelBody,
      response: {
        200: CfhRequestRecord, ...errors, ...notFoundResponse,
        409: { ...ErrorBody, description: 'the request is already completed' },
      },
    },
  }, async (request) => {
    const { organizationId, tokenId } = principalOf(request);
    const result = found(await store.cancel(deps.db, organizationId, request.body.message_id, tokenId, deps.clock.now()));
    if (!result.changed && cancelOfClosed(result.row) === 'conflict') {
      throw new AppError(409, 'cfh_request_completed', 'the request is already completed and cannot be cancelled');
    }
    return toRecord(result.row);
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
    const { organizationId } = principalOf(request);
    return toStatusView(found(await store.findStatus(deps.db, organizationId, request.query.message_id)));
  });
}
