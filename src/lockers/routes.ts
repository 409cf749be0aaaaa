// The seven locker operations (L1-L7) over HTTP.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../app.ts';
import { lockerKeyAuth, secretTokenAuth } from '../http/auth.ts';
import { AppError, notFound } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import type { Tx } from '../db/db.ts';
import { enqueueJob } from '../jobs/queue.ts';
import { COOL_OFF_END_JOB, coolOffKey, issueCabinetCommand } from './commands.ts';
import {
  commandedCabinetView, commandProblems, looksLikeOpenCode, coolOffEnd, createdOrderView, customerCabinetView, doorOf, isReplay,
  invalidReport, orderMismatch, orderRecordView, orderRefusal, repeatedKeys, unknownKeys, unstorableJson, type OrderRecordRow,
} from './rules.ts';
import {
  CabinetCommandBody, CabinetParams, CommandedCabinet, CompleteOrderBody, CreatedOrder, CreateOrderBody, CustomerCabinet,
  CustomerCommandBody, ErrorBody, LocationParams, Locker, OpenCodeParams, OrderRecord, StatusReportBody, StatusReportReply,
} from './schemas.ts';
import {
  applyStatusReport, completeOpenOrder, createOrder, findLatestOrderOfCabinet, findOpenOrderOfCabinet, findOrderByOpenCode,
  locationListingJson, lockCabinetForCommand, recordCustomerAction,
} from './store.ts';

const tags = ['lockers'];
const secretToken = [{ secretToken: [] }];
/** Bytes of randomness of an open code: 192 bits, 32 URL-safe characters. */
const OPEN_CODE_BYTES = 24;
/** A creation or completion that lost a race to a concurrent change looks again, this many times. */
const ATTEMPTS = 3;

/** L4 and L6 may be sent without a body; an absent body means no options. */
const emptyBodyIsNoOptions = async (request: FastifyRequest) => {
  if (request.body === undefined || request.body === null) request.body = {};
};

const described = (description: string) => ({ ...ErrorBody, description });
/** The error statuses every route shares; `body: true` adds those of a JSON body. */
function errors<S extends number>(specific: Record<S, string>, opts: { body: boolean; credential?: string }) {
  return {
    401: described(`missing or wrong ${opts.credential ?? 'secret_token'}`),
    ...(opts.body ? { 400: described('the body is not JSON'), 413: described('the body is too large'), 415: described('unsupported content type (send application/json)') } : {}),
    429: described('too many refused requests from this client; see Retry-After'),
    503: described('the database is unavailable; see Retry-After'),
    ...(Object.fromEntries(Object.entries<string>(specific).map(([s, d]) => [s, described(d)])) as Record<S, ReturnType<typeof described>>),
  };
}

export async function lockerRoutes(fastify: FastifyInstance, deps: Deps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, clock } = deps;
  const onRequest = secretTokenAuth(deps.secretDigest);

  // L4 and L6 have an optional body, and store apps send `content-type: application/json` with none:
  // within these routes an empty JSON body is no body (elsewhere Fastify answers 400).
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) done(null, undefined);
    else void parseJson(request, body as string, done);
  });

  app.get('/api/lockers/locations/:location_id', {
    onRequest,
    schema: {
      operationId: 'getLocationLockers', tags, security: secretToken,
      summary: 'The lockers of a location, each with its cabinets',
      params: LocationParams,
      response: { 200: Type.Array(Locker, { description: "the location's lockers, each with its cabinets" }), ...errors({ 404: 'no such location', 422: 'location_id is not an id' }, { body: false }) },
    },
  }, async (request, reply) => {
    const body = await locationListingJson(db, request.params.location_id, clock.now());
    if (body === undefined) throw notFound(`location ${request.params.location_id}`);
    // Already JSON: sent as it is (a string with a JSON content type is not serialized again).
    return reply.type('application/json; charset=utf-8').send(body as never);
  });

  app.post('/api/lockers/orders', {
    onRequest,
    schema: {
      operationId: 'createLockerOrder', tags, security: secretToken,
      summary: 'Create an order bound to a cabinet',
      description: 'An identical request repeated while its order is open answers 201 with that same order.',
      body: CreateOrderBody,
      response: {
        201: { ...CreatedOrder, description: 'the new order; for an identical repeat while it is open, the same order' },
        ...errors({
          409: 'cabinet_occupied (an open order), cabinet_disabled or cabinet_cooling_off',
          422: 'invalid body; ids that do not belong together; rearload on a locker without rear loading',
        }, { body: true }),
      },
    },
  }, async (request, reply) => {
    const req = request.body;
    const openCode = randomToken(OPEN_CODE_BYTES);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = clock.now();
      const { target, created } = await createOrder(db, {
        orderId: req.order_id, cabinetId: req.cabinet_id, lockerId: req.locker_id, organizationId: req.organization_id,
        locationId: req.location_id, rearload: req.rearload, openCode,
      }, now);
      const mismatch = orderMismatch(req, target);
      if (mismatch !== null) throw mismatch;
      if (created !== undefined) return reply.code(201).send(createdOrderView(created));
      // Nothing was inserted: read the open order with a fresh snapshot (it may have just committed).
      const open = await findOpenOrderOfCabinet(db, req.cabinet_id);
      if (isReplay(req, open)) return reply.code(201).send(createdOrderView(open));
      const refusal = target === undefined ? null : orderRefusal(target, open);
      if (refusal !== null) throw refusal;
      // The open order was completed between the two reads: the cabinet may be free now.
    }
    throw new AppError(409, 'cabinet_occupied', `cabinet ${req.cabinet_id} is changing, try again`);
  });

  app.put('/api/lockers/cabinets/:cabinet_id', {
    onRequest,
    schema: {
      operationId: 'commandCabinet', tags, security: secretToken,
      summary: 'Command a cabinet (internal request)',
      description: 'open/close act on the front door, or the rear door with rearload; close with delay closes later.',
      params: CabinetParams,
      body: CabinetCommandBody,
      response: { 200: { ...CommandedCabinet, description: 'the cabinet as the command leaves it (a delayed close: as it is until then)' }, ...errors({ 404: 'no such cabinet', 422: 'invalid body, or what the command or an occupied cabinet needs is missing' }, { body: true }) },
    },
  }, async (request) => {
    const req = request.body;
    const cabinetId = request.params.cabinet_id;
    const cabinet = await db.tx(async (q) => {
      const cabinet = await lockCabinetForCommand(q, cabinetId);
      if (cabinet === undefined) throw notFound(`cabinet ${cabinetId}`);
      const problem = commandProblems(req, {
        occupied: cabinet.occupied, rearLoadingAvailable: cabinet.rear_loading_available, currentOrderId: cabinet.current_order_id,
      });
      if (problem !== null) throw problem;
      const orderId = req.order_id ?? null;
      const updated = await issueCabinetCommand(q, {
        target: { cabinetId }, command: req.command, door: doorOf(req), source: 'staff', actedBy: req.acted_by ?? null,
        orderId: orderId === null ? null : String(orderId), reason: req.reason ?? null, size: req.size?.trim() ?? null,
        thermalMode: req.thermal_mode ?? null, delaySeconds: req.command === 'close' ? (req.delay ?? null) : null,
      }, clock.now());
      if (updated === undefined) throw notFound(`cabinet ${cabinetId}`);
      return updated;
    });
    return commandedCabinetView(cabinet);
  });

  /** L4 and L6: complete the open order, or give back the already completed one unchanged. */
  async function complete(
    by: { cabinetId: number } | { openCode: string },
    body: { completed_by?: number | null; completed_device_id?: number | null; delay?: number | null } | undefined,
  ) {
    const missing = () =>
      new AppError(404, 'not_found', 'cabinetId' in by ? `cabinet ${by.cabinetId} has no order to complete` : 'no order has this open code');
    if ('openCode' in by && !looksLikeOpenCode(by.openCode)) throw missing();
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = clock.now();
      const coolOffUntil = coolOffEnd(now, body?.delay);
      const run = async (q: Tx): Promise<OrderRecordRow | undefined> => {
        const done = await completeOpenOrder(q, by, {
          completedBy: body?.completed_by ?? null, completedDeviceId: body?.completed_device_id ?? null, coolOffUntil,
        }, now);
        if (done !== undefined && coolOffUntil !== null) {
          await enqueueJob(q, COOL_OFF_END_JOB, { cabinet_id: done.cabinet_id }, coolOffUntil, { key: coolOffKey(done.cabinet_id) });
        }
        return done;
      };
      const done = coolOffUntil === null ? await db.statement(run) : await db.tx(run);
      if (done !== undefined) return orderRecordView(done);
      const order = 'cabinetId' in by ? await findLatestOrderOfCabinet(db, by.cabinetId) : await findOrderByOpenCode(db, by.openCode);
      if (order === undefined || order.canceled_at !== null) throw missing();
      if (order.completed_at !== null) return orderRecordView(order);
      // An order opened after this statement's snapshot: complete that one.
    }
    throw new AppError(409, 'order_changing', 'the order is changing, try again');
  }

  app.put('/api/lockers/orders/cabinets/:cabinet_id', {
    onRequest,
    preValidation: emptyBodyIsNoOptions,
    schema: {
      operationId: 'completeCabinetOrder', tags, security: secretToken,
      summary: "Complete the cabinet's order",
      description: "Completes the cabinet's open order; without one, the cabinet's latest order if it is completed comes back unchanged, else 404. `delay` (seconds) keeps the cabinet in cool-off that long before it is released.",
      params: CabinetParams,
      body: CompleteOrderBody,
      response: { 200: { ...OrderRecord, description: 'the completed order (unchanged if it already was)' }, ...errors({ 404: 'the cabinet has no order to complete', 422: 'invalid body' }, { body: true }) },
    },
  }, async (request) => complete({ cabinetId: request.params.cabinet_id }, request.body));

  app.post('/api/lockers/cabinets/customers/:open_code', {
    onRequest,
    schema: {
      operationId: 'commandByOpenCode', tags, security: secretToken,
      summary: "A customer's action on the cabinet of an order, by open code",
      description: 'here: the customer is at the locker; agree: open the front door; disagree: the customer declines.',
      params: OpenCodeParams,
      body: CustomerCommandBody,
      response: { 200: { ...CustomerCabinet, description: "the order's cabinet" }, ...errors({ 404: 'no open order with this open code', 422: 'invalid command' }, { body: true }) },
    },
  }, async (request) => {
    const { open_code: openCode } = request.params;
    const { command } = request.body;
    const missing = () => new AppError(404, 'not_found', 'no open order has this open code');
    if (!looksLikeOpenCode(openCode)) throw missing();
    if (command !== 'agree') {
      const cabinet = await recordCustomerAction(db, openCode, command, clock.now());
      if (cabinet === undefined) throw missing();
      return customerCabinetView(cabinet);
    }
    const opened = await db.tx((q) => issueCabinetCommand(q, {
      target: { openCode, event: 'agree' }, command: 'open', door: 'front', source: 'customer', actedBy: null, orderId: null,
      reason: null, size: null, thermalMode: null, delaySeconds: null,
    }, clock.now()));
    if (opened === undefined) throw missing();
    return customerCabinetView(opened);
  });

  app.put('/api/lockers/orders/customer/:open_code', {
    onRequest,
    preValidation: emptyBodyIsNoOptions,
    schema: {
      operationId: 'completeOrderByOpenCode', tags, security: secretToken,
      summary: 'Complete an order by its open code',
      description: 'Completing a completed order returns it unchanged. `delay` (seconds) keeps the cabinet in cool-off that long.',
      params: OpenCodeParams,
      body: CompleteOrderBody,
      response: { 200: { ...OrderRecord, description: 'the completed order (unchanged if it already was)' }, ...errors({ 404: 'no order with this open code', 422: 'invalid body' }, { body: true }) },
    },
  }, async (request) => complete({ openCode: request.params.open_code }, request.body));

  app.post('/api/lockers/cabinet/status', {
    onRequest: lockerKeyAuth(db),
    schema: {
      operationId: 'updateLockerStatus', tags, security: [{ lockerApiKey: [] }],
      summary: 'A version 2 locker reports its door states',
      description: 'All or nothing: a report naming a cabinet key the locker does not have changes nothing (422).',
      body: StatusReportBody,
      response: { 200: { ...StatusReportReply, description: 'the report was applied' }, ...errors({ 422: 'invalid report, an unknown cabinet key (nothing applied), or a locker that is not version 2' }, { body: true, credential: 'api-key' }) },
    },
  }, async (request) => {
    const locker = request.locker;
    if (locker === null) throw new AppError(401, 'unauthorized', 'the api-key is not valid');
    if (locker.version !== 2) {
      // A 422 always says what is wrong by field: here the version of the locker the api-key names.
      throw new AppError(422, 'unsupported_locker_version', `the status update is for version 2 lockers; this locker is version ${locker.version}`, {
        errors: { version: [`is ${locker.version}; the status update is for version 2 lockers`] },
      });
    }
    const { cabinets, locker_info: info, event } = request.body;
    const eventProblem = unstorableJson(event);
    if (eventProblem !== null) throw invalidReport({ event: [eventProblem] });
    const repeated = repeatedKeys(cabinets);
    if (repeated !== null) throw invalidReport(repeated);
    const unknown = await applyStatusReport(db, {
      lockerId: locker.id,
      keys: cabinets.map((c) => c.key),
      front: cabinets.map((c) => c.front_status ?? null),
      rear: cabinets.map((c) => c.rear_status ?? null),
      ip: info?.ip ?? null,
      firmware: info?.firmware ?? null,
      eventType: event?.type ?? null,
      event: event ?? null,
    }, clock.now());
    if (unknown.length > 0) throw invalidReport(unknownKeys(cabinets, unknown));
    return { message: 'Locker status updated' };
  });
}
