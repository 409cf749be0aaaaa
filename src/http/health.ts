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

export async function healthRoutes(app: FastifyInstance, deps: HealthDeps): Promise<void> {
  // Reported, not required: with the broker away the API still works and device messages wait in the outbox.
  const mqtt = () => (deps.devices.up ? 'up' : 'down');
  app.get('/healthz', { schema: { tags: ['service'], operationId: 'healthz', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { tags: ['service'], operationId: 'readyz' } }, async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([deps.db.ping(), timeout]);
      return { status: 'ready', database: 'up', mqtt: mqtt() };
    } catch {
      return reply.code(503).header('retry-after', '5').send({ message: 'the database is not reachable', code: 'unavailable', database: 'down', mqtt: mqtt() });
    } finally {
      clearTimeout(timer);
    }
  });
}
