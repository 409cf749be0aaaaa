// Shared helpers of the locker tests: a store app's and a locker's view of the HTTP API.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { makeWorld, testApp, withSecret, type TestContext, type World } from '../support/world.ts';

/** The contract's timestamp: UTC with exactly six fractional digits. */
export const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

export type Json = Record<string, unknown>;

/** The keys of the cabinet record L3 and L5 answer. */
export const CABINET_RECORD_FIELDS = [
  'id',
  'key',
  'created_at',
  'updated_at',
  'name',
  'locker_id',
  'state',
  'enabled',
  'size',
  'occupied',
  'released_at',
  'thermal_mode',
  'rear_load_status',
  'tag',
];

export interface Lockers {
  ctx: TestContext;
  world: World;
  /** Creates an order in the world's cabinet `index` (L2) and returns the response. */
  order(index?: number, overrides?: Json): Promise<LightMyRequestResponse>;
  /** L2 that must succeed: the 201 body. */
  placeOrder(index?: number, overrides?: Json): Promise<Json>;
  cabinet(index?: number): Promise<Json>;
  command(index: number, body: Json): Promise<LightMyRequestResponse>;
  customer(openCode: string, command: string): Promise<LightMyRequestResponse>;
  completeByCabinet(index: number, body?: Json): Promise<LightMyRequestResponse>;
  completeByCode(openCode: string, body?: Json): Promise<LightMyRequestResponse>;
  status(body: Json, apiKey?: string): Promise<LightMyRequestResponse>;
}

let appOfFile: Promise<TestContext> | null = null;
/** One app per test file: building it is the slow part, and each test makes its own world anyway. */
export function sharedApp(): Promise<TestContext> {
  appOfFile ??= testApp();
  return appOfFile;
}

export async function lockers(opts: Parameters<typeof makeWorld>[2] & { ctx?: TestContext } = {}): Promise<Lockers> {
  const ctx = opts.ctx ?? (await sharedApp());
  const world = await makeWorld(ctx.db, ctx.clock, opts);
  const { app } = ctx;
  const cab = (index: number) => {
    const id = world.cabinetIds[index];
    assert.ok(id !== undefined, `the world has a cabinet ${index}`);
    return id;
  };
  const api: Lockers = {
    ctx,
    world,
    order: (index = 0, overrides = {}) =>
      app.inject({
        method: 'POST',
        url: withSecret('/api/lockers/orders'),
        payload: {
          rearload: false,
          locker_id: world.lockerId,
          cabinet_id: cab(index),
          order_id: 5000 + index,
          organization_id: world.organizationId,
          location_id: world.locationId,
          ...overrides,
        },
      }),
    async placeOrder(index = 0, overrides = {}) {
      const res = await api.order(index, overrides);
      assert.equal(res.statusCode, 201, res.body);
      return res.json<Json>();
    },
    async cabinet(index = 0) {
      const res = await app.inject({ method: 'GET', url: withSecret(`/api/lockers/locations/${world.locationId}`) });
      assert.equal(res.statusCode, 200, res.body);
      const [locker] = res.json<{ cabinets: Json[] }[]>();
      const found = locker?.cabinets.find((c) => c.id === cab(index));
      assert.ok(found, 'the cabinet is listed');
      return found;
    },
    command: (index, body) => app.inject({ method: 'PUT', url: withSecret(`/api/lockers/cabinets/${cab(index)}`), payload: body }),
    customer: (openCode, command) =>
      app.inject({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${encodeURIComponent(openCode)}`), payload: { command } }),
    completeByCabinet: (index, body) =>
      app.inject({ method: 'PUT', url: withSecret(`/api/lockers/orders/cabinets/${cab(index)}`), ...(body === undefined ? {} : { payload: body }) }),
    completeByCode: (openCode, body) =>
      app.inject({
        method: 'PUT',
        url: withSecret(`/api/lockers/orders/customer/${encodeURIComponent(openCode)}`),
        ...(body === undefined ? {} : { payload: body }),
      }),
    status: (body, apiKey = world.lockerKey) =>
      app.inject({ method: 'POST', url: '/api/lockers/cabinet/status', headers: { 'api-key': apiKey }, payload: body }),
  };
  return api;
}

export interface OutboxRow {
  topic: string;
  payload: Json;
  message_key: string;
}

/** The device messages queued for a locker, oldest first. */
export async function outboxOf(ctx: TestContext, lockerId: number): Promise<OutboxRow[]> {
  return ctx.db.query<OutboxRow>('SELECT topic, payload, message_key FROM device_outbox WHERE topic = $1 ORDER BY id', [`lockers/${lockerId}/commands`]);
}

export function assertError(res: LightMyRequestResponse, status: number, code: string): Json {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json<Json>();
  assert.equal(body.code, code, res.body);
  assert.equal(typeof body.message, 'string');
  return body;
}

/** A 422 naming the given fields in `errors`. */
export function assertInvalid(res: LightMyRequestResponse, ...fields: string[]): Json {
  const body = assertError(res, 422, 'validation_failed');
  const errors = body.errors as Record<string, string[]>;
  for (const f of fields) assert.ok(Array.isArray(errors?.[f]) && errors[f].length > 0, `errors.${f} in ${JSON.stringify(body)}`);
  return body;
}
