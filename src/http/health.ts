// Liveness (no I/O) and readiness (the database answers).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/db.ts';

export interface HealthDeps {
  db: Pick<Db, 'ping'>;
  /** The device channel: its broker is reported, not required. */
  devices: { readonly up: boolean };
}

const READY_TIMEOUT_MS = 2_000;

const Up = Type.Unsafe<'up' | 'down'>({ type: 'string', enum: ['up', 'down'] });
const Ready = Type.Object({ status: Type.Literal('ready'), database: Type.Literal('up'), mqtt: Up }, { title: 'Readiness' });
const NotReady = Type.Object(
  { message: Type.String(), code: Type.Literal('unavailable'), database: Type.Literal('down'), mqtt: Up },
  { title: 'Unreadiness', description: 'the database is not reachable; see Retry-After' },
);

export async function healthRoutes(app: FastifyInstance, deps: HealthDeps): Promise<void> {
  // Reported, not required: with the broker away the API still works and device messages wait in the outbox.
  const mqtt = () => (deps.devices.up ? 'up' : 'down');
  // Probed every few seconds: its request lines would drown the log, so they are one line at debug.
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      onResponse: async (request, reply) => app.log.debug({ reqId: request.id, statusCode: reply.statusCode }, 'GET /healthz'),
      schema: {
        tags: ['service'],
        operationId: 'healthz',
        security: [],
        summary: 'Liveness: the process answers (no I/O)',
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { title: 'Liveness', description: 'the process is alive' }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['service'],
        operationId: 'readyz',
        security: [],
        summary: 'Readiness: the database answers (the MQTT broker is reported, not required)',
        response: { 200: { ...Ready, description: 'ready to serve' }, 503: NotReady },
      },
    },
    async (_request, reply) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
      });
      try {
        await Promise.race([deps.db.ping(), timeout]);
        return { status: 'ready', database: 'up', mqtt: mqtt() };
      } catch {
        return reply
          .code(503)
          .header('retry-after', '5')
          .send({ message: 'the database is not reachable', code: 'unavailable', database: 'down', mqtt: mqtt() });
      } finally {
        clearTimeout(timer);
      }
    },
  );
}
