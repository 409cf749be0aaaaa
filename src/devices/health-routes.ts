// D1 over HTTP: a location's devices with their health (contract section 14). Parse, list, render.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerAuth, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { errorResponse, errorResponses, nullable, NullableTimestamp, oneOf, RowId, SERVICE_ERRORS } from '../http/schemas.ts';
import { deviceView, listDevices, type DeviceListDeps } from './health.ts';

export interface HealthRouteDeps extends DeviceListDeps {
  apiTokens: ApiTokens;
}

const DeviceHealthView = Type.Object({
  kind: oneOf(['locker', 'edge', 'call_button']),
  id: Type.Union([Type.Integer(), Type.String()], { description: "a locker's id, an edge device's edge_id" }),
  name: Type.String(),
  online: Type.Boolean({ description: 'connected over MQTT, or seen within DEVICE_OFFLINE_SECONDS' }),
  last_seen_at: NullableTimestamp,
  voltage: nullable(Type.Number({ description: 'call buttons; null for other devices' })),
  firmware: nullable(Type.String()),
  ip: nullable(Type.String()),
  queued_messages: Type.Integer({ description: 'messages queued or sent to the device and not acked yet' }),
});

export async function deviceHealthRoutes(fastify: FastifyInstance, deps: HealthRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/devices',
    {
      onRequest: bearerAuth(deps.apiTokens, 'devices'),
      schema: {
        operationId: 'listDevices',
        tags: ['devices'],
        security: [{ bearerToken: [] }],
        summary: "A location's devices and their health",
        description: 'Lockers and radio edge devices of the location: online, last seen, firmware and ip (lockers), and messages not acked yet.',
        querystring: Type.Object({ location_id: RowId }),
        response: {
          200: Type.Array(DeviceHealthView, { description: "the location's devices" }),
          401: errorResponse('missing or invalid bearer token'),
          403: errorResponse('insufficient_scope: the token lacks the devices scope'),
          ...errorResponses({ 404: 'no such location (or one of another organization)', 422: 'location_id is missing or not an id', ...SERVICE_ERRORS }),
        },
      },
    },
    async (request) => {
      const rows = await listDevices(deps, tokenActorOf(request), request.query.location_id);
      return rows.map(deviceView);
    },
  );
}
