// What a feature hands compose(): its routes (their dependencies bound when the module was built),
// its job kinds, its event-log subscribers and what it does with device messages. compose() builds
// each feature's module once; app.ts registers the routes, the scheduler the jobs, the event log
// the subscribers, the device gateway the handlers.
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify';
import type { AckHandler } from './devices/acks.ts';
import type { DeviceIdentity } from './devices/wire.ts';
import type { EventHandler } from './events/subscribers.ts';
import type { AnyJobHandlers } from './jobs/scheduler.ts';

export interface FeatureModule {
  /** Registers the feature's routes on the app. */
  routes?: (app: FastifyInstance) => Promise<void>;
  jobs?: AnyJobHandlers;
  /** Event-log subscribers by name (the name is the subscriber's cursor row). */
  subscribers?: Readonly<Record<string, EventHandler>>;
  /** Acks of the messages the feature sends devices, by handler name. */
  acks?: Readonly<Record<string, { kind: DeviceIdentity['kind']; handle: AckHandler }>>;
}

/** A module's routes as a plugin registration with its deps bound. */
export const routesOf =
  <D extends FastifyPluginOptions>(plugin: FastifyPluginAsync<D>, deps: D) =>
  async (app: FastifyInstance): Promise<void> => {
    await app.register(plugin, deps);
  };
