// The locker operations (L1-L9) over HTTP: each route parses, calls its use case
// (orders.ts, cabinets.ts, status.ts, lifecycle.ts) and renders its view.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { lockerByKey } from '../devices/credentials.ts';
import { lockerKeyAuth, secretTokenAuth } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { BODY_ERRORS, errorResponse, errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { commandCabinet, customerCommand } from './cabinets.ts';
import { cancelOrder, renewOpenCode } from './lifecycle.ts';
import { completeOrder, createOrder } from './orders.ts';
import {
  CabinetCommandBody,
  CabinetParams,
  CommandedCabinet,
  CompleteOrderBody,
  CreatedOrder,
  CreateOrderBody,
  CustomerCabinet,
  CustomerCommandBody,
  LocationParams,
  Locker,
  OpenCodeParams,
  OrderParams,
  OrderRecord,
  OrderScopeBody,
  StatusReportBody,
  StatusReportReply,
} from './schemas.ts';
import { locationLockersJson, reportStatus } from './status.ts';
import type { LockerDeps } from './types.ts';
import { commandedCabinetView, createdOrderView, customerCabinetView, orderRecordView, statusReportView } from './views.ts';

export interface LockerRouteDeps extends LockerDeps {
  /** SHA-256 of the shared secret_token of L1-L6, L8, L9. */
  secretDigest: string;
  /** A locker was heard from (L7): device health's last-seen time. */
  deviceSeen?: (lockerId: number) => void;
}

const tags = ['lockers'];
const secretToken = [{ secretToken: [] }];

/** L4 and L6 may be sent without a body; an absent body means no options. */
const emptyBodyIsNoOptions = async (request: FastifyRequest) => {
  if (request.body === undefined || request.body === null) request.body = {};
};

/** The error statuses every route shares; `body: true` adds those of a JSON body. */
function errors<S extends number>(
  specific: Record<S, string | { description: string; codes: readonly string[] }>,
  opts: { body: boolean; credential?: string },
) {
  return {
    401: errorResponse(`missing or wrong ${opts.credential ?? 'secret_token'}`),
    ...(opts.body ? errorResponses(BODY_ERRORS) : {}),
    ...errorResponses(SERVICE_ERRORS),
    ...errorResponses(specific),
  };
}

export async function lockerRoutes(fastify: FastifyInstance, deps: LockerRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = secretTokenAuth(deps.secretDigest);

  // L4 and L6 have an optional body, and store apps send `content-type: application/json` with none:
  // within these routes an empty JSON body is no body (elsewhere Fastify answers 400).
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) done(null, undefined);
    else void parseJson(request, body as string, done);
  });

  app.get(
    '/api/lockers/locations/:location_id',
    {
      onRequest,
      schema: {
        operationId: 'getLocationLockers',
        tags,
        security: secretToken,
        summary: 'The lockers of a location, each with its cabinets',
        params: LocationParams,
        response: {
          200: Type.Array(Locker, { description: "the location's lockers, each with its cabinets" }),
          ...errors({ 404: 'no such location', 422: 'location_id is not an id' }, { body: false }),
        },
      },
    },
    async (request, reply) => {
      const body = await locationLockersJson(deps, request.params.location_id);
      // Already JSON: sent as it is (a string with a JSON content type is not serialized again).
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );

  app.post(
    '/api/lockers/orders',
    {
      onRequest,
      schema: {
        operationId: 'createLockerOrder',
        tags,
        security: secretToken,
        summary: 'Create an order bound to a cabinet',
        description: 'An identical request repeated while its order is open answers 201 with that same order.',
        body: CreateOrderBody,
        response: {
          201: { ...CreatedOrder, description: 'the new order; for an identical repeat while it is open, the same order' },
          ...errors(
            {
              409: {
                description: 'cabinet_occupied (an open order), cabinet_disabled or cabinet_cooling_off',
                codes: ['cabinet_occupied', 'cabinet_disabled', 'cabinet_cooling_off'],
              },
              422: 'invalid body; ids that do not belong together; rearload on a locker without rear loading',
            },
            { body: true },
          ),
        },
      },
    },
    async (request, reply) => reply.code(201).send(createdOrderView(await createOrder(deps, request.body))),
  );

  app.put(
    '/api/lockers/cabinets/:cabinet_id',
    {
      onRequest,
      schema: {
        operationId: 'commandCabinet',
        tags,
        security: secretToken,
        summary: 'Command a cabinet (internal request)',
        description: 'open/close act on the front door, or the rear door with rearload; close with delay closes later.',
        params: CabinetParams,
        body: CabinetCommandBody,
        response: {
          200: { ...CommandedCabinet, description: 'the cabinet as the command leaves it (a delayed close: as it is until then)' },
          ...errors({ 404: 'no such cabinet', 422: 'invalid body, or what the command or an occupied cabinet needs is missing' }, { body: true }),
        },
      },
    },
    async (request) => commandedCabinetView(await commandCabinet(deps, request.params.cabinet_id, request.body)),
  );

  app.put(
    '/api/lockers/orders/cabinets/:cabinet_id',
    {
      onRequest,
      preValidation: emptyBodyIsNoOptions,
      schema: {
        operationId: 'completeCabinetOrder',
        tags,
        security: secretToken,
        summary: "Complete the cabinet's order",
        description:
          "Completes the cabinet's open order; without one, the cabinet's latest order if it is completed comes back unchanged, else 404. `delay` (seconds) keeps the cabinet in cool-off that long before it is released.",
        params: CabinetParams,
        body: CompleteOrderBody,
        response: {
          200: { ...OrderRecord, description: 'the completed order (unchanged if it already was)' },
          ...errors(
            {
              404: 'the cabinet has no order to complete',
              409: { description: "order_canceled: the cabinet's latest order was canceled", codes: ['order_canceled', 'order_changing'] },
              422: 'invalid body',
            },
            { body: true },
          ),
        },
      },
    },
    async (request) => orderRecordView(await completeOrder(deps, { cabinetId: request.params.cabinet_id }, request.body)),
  );

  app.post(
    '/api/lockers/cabinets/customers/:open_code',
    {
      onRequest,
      schema: {
        operationId: 'commandByOpenCode',
        tags,
        security: secretToken,
        summary: "A customer's action on the cabinet of an order, by open code",
        description: 'here: the customer is at the locker; agree: open the front door; disagree: the customer declines.',
        params: OpenCodeParams,
        body: CustomerCommandBody,
        response: {
          200: { ...CustomerCabinet, description: "the order's cabinet" },
          ...errors({ 404: 'no open order with this open code', 422: 'invalid command' }, { body: true }),
        },
      },
    },
    async (request) => customerCabinetView(await customerCommand(deps, request.params.open_code, request.body.command)),
  );

  app.put(
    '/api/lockers/orders/customer/:open_code',
    {
      onRequest,
      preValidation: emptyBodyIsNoOptions,
      schema: {
        operationId: 'completeOrderByOpenCode',
        tags,
        security: secretToken,
        summary: 'Complete an order by its open code',
        description: 'Completing a completed order returns it unchanged. `delay` (seconds) keeps the cabinet in cool-off that long.',
        params: OpenCodeParams,
        body: CompleteOrderBody,
        response: {
          200: { ...OrderRecord, description: 'the completed order (unchanged if it already was)' },
          ...errors(
            {
              404: 'no order with this open code',
              409: { description: 'order_canceled: the order was canceled', codes: ['order_canceled', 'order_changing'] },
              422: 'invalid body',
            },
            { body: true },
          ),
        },
      },
    },
    async (request) => orderRecordView(await completeOrder(deps, { openCode: request.params.open_code }, request.body)),
  );

  app.post(
    '/api/lockers/cabinet/status',
    {
      onRequest: lockerKeyAuth((apiKey) => lockerByKey(deps.db, apiKey)),
      schema: {
        operationId: 'updateLockerStatus',
        tags,
        security: [{ lockerApiKey: [] }],
        summary: 'A version 2 locker reports its door states',
        description:
          'All or nothing: a report naming a cabinet key the locker does not have changes nothing (422). A door status null or absent is ' +
          'not reported (that door keeps its state, as lockers without a rear door send it); a cabinet entry reporting neither door is 422.',
        body: StatusReportBody,
        response: {
          200: { ...StatusReportReply, description: 'the report was applied' },
          ...errors(
            {
              422: {
                description: 'invalid report, an unknown cabinet key (nothing applied), or a locker that is not version 2',
                codes: ['validation_failed', 'unsupported_locker_version'],
              },
            },
            { body: true, credential: 'api-key' },
          ),
        },
      },
    },
    async (request) => {
      const locker = request.locker;
      if (locker === null) throw new AppError(401, 'unauthorized', 'the api-key is not valid');
      await reportStatus(deps, locker, request.body);
      deps.deviceSeen?.(locker.id);
      return statusReportView();
    },
  );

  app.post(
    '/api/lockers/orders/:id/cancel',
    {
      onRequest,
      preValidation: emptyBodyIsNoOptions,
      schema: {
        operationId: 'cancelLockerOrder',
        tags,
        security: secretToken,
        summary: 'Cancel an order and release its cabinet',
        description:
          "An open, ready or expired order is canceled and its cabinet released; a canceled order comes back unchanged. `id` is the order's own id (the `id` of the creation). With `organization_id` / `location_id`, an order of another is 404.",
        params: OrderParams,
        body: OrderScopeBody,
        response: {
          200: { ...OrderRecord, description: 'the canceled order (unchanged if it already was)' },
          ...errors(
            {
              404: 'no such order',
              409: { description: 'order_completed: the order is completed', codes: ['order_completed', 'order_changing'] },
              422: 'invalid id or body',
            },
            { body: true },
          ),
        },
      },
    },
    async (request) => orderRecordView(await cancelOrder(deps, request.params.id, request.body)),
  );

  app.post(
    '/api/lockers/orders/:id/open_code',
    {
      onRequest,
      preValidation: emptyBodyIsNoOptions,
      schema: {
        operationId: 'renewOpenCode',
        tags,
        security: secretToken,
        summary: 'Give an order a new open code',
        description:
          'An order that has not ended (open, ready or expired) gets a new `open_code`; the old one stops working at once. With `organization_id` / `location_id`, an order of another is 404.',
        params: OrderParams,
        body: OrderScopeBody,
        response: {
          200: { ...CreatedOrder, description: 'the order with its new open code (the creation view)' },
          ...errors(
            {
              404: 'no such order',
              409: { description: 'order_completed or order_canceled: the order has ended', codes: ['order_completed', 'order_canceled', 'order_changing'] },
              422: 'invalid id or body',
            },
            { body: true },
          ),
        },
      },
    },
    async (request) => createdOrderView(await renewOpenCode(deps, request.params.id, request.body)),
  );
}
