// The broker side of the gateway, built once at start: the embedded broker with each device's
// delivery lane in front of it (what the dispatcher publishes goes through the lane), or the
// service as a client of an external broker with its redelivery on SUBSCRIBE.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { EmbeddedBroker } from './broker.ts';
import { ExternalBroker } from './client.ts';
import { checkDeviceKey, keysStillValid } from './credentials.ts';
import type { DispatchContext } from './dispatch.ts';
import { DeliveryLanes } from './lanes.ts';
import { ExternalRedelivery } from './redelivery.ts';
import type { GatewayLogger, Transport } from './transport.ts';
import { deviceOfInboxTopic, inboxTopic, type DeviceIdentity } from './wire.ts';

export interface Channel {
  /** What the dispatcher publishes on. */
  transport: Transport;
  broker: EmbeddedBroker | null;
  /** Sends a device what it has not acked (it subscribed); resolves with how many, when known. */
  redeliver(topic: string): Promise<number> | null;
  /** Resolves once no device's lane is working (a lane waiting for its device to read is not). */
  quiet(): Promise<void>;
}

export interface ChannelOptions {
  config: Config;
  db: Db;
  clock: Clock;
  log: GatewayLogger;
  clientId: string;
  onMessage(topic: string, payload: Buffer): void;
  onConnected(device: DeviceIdentity): void;
  onDisconnected(device: DeviceIdentity): void;
  /** The external broker (re)connected: publish what waits. */
  onBrokerConnect(): void;
  dispatchContext(): DispatchContext | null;
  track(work: Promise<unknown>): void;
}

export async function startChannel(o: ChannelOptions): Promise<Channel> {
  if (o.config.mqttUrl !== null) {
    const transport = await ExternalBroker.connect({
      url: o.config.mqttUrl,
      clientId: o.clientId,
      persistentSession: o.config.mqttClientId !== null,
      onDeviceMessage: o.onMessage,
      onConnect: o.onBrokerConnect,
      log: o.log,
    });
    const external = new ExternalRedelivery({ db: o.db, context: o.dispatchContext, log: o.log, track: o.track });
    return { transport, broker: null, redeliver: (topic) => (external.request(topic), null), quiet: () => Promise.resolve() };
  }
  let lanes: DeliveryLanes | null = null;
  const broker = await EmbeddedBroker.start({
    port: o.config.mqttPort,
    host: o.config.host,
    log: o.log,
    hooks: {
      authenticate: (device, key) => checkDeviceKey(o.db, device, key),
      onDeviceMessage: o.onMessage,
      onDeviceListening: (device) => void lanes?.redeliver(inboxTopic(device)),
      onConnected: o.onConnected,
      onDisconnected: (device) => {
        o.onDisconnected(device);
        if (broker.connectionsOf(device) === 0) lanes?.closed(inboxTopic(device));
      },
    },
  });
  // A key rotated or a device disabled anywhere ends its open session here at once (the embedded
  // broker only: an external broker keeps its own sessions until the device reconnects).
  const offKeys = o.db.commits.on('device_keys', () => {
    broker.dropStale((sessions) => keysStillValid(o.db, sessions)).catch((err: unknown) => o.log.error({ err }, "could not check connected devices' keys"));
  });
  const laned = new DeliveryLanes({
    db: o.db,
    clock: o.clock,
    log: o.log,
    budgetBytes: o.config.deviceInflightBytes,
    broker: {
      publish: (topic, payload, onWritten) => broker.publishCounted(topic, payload, onWritten),
      queuedBytes: (topic) => {
        const device = deviceOfInboxTopic(topic);
        return device === null ? 0 : broker.bytesQueuedFor(device);
      },
    },
  });
  lanes = laned;
  o.log.info({ port: broker.port }, 'embedded MQTT broker listening');
  return {
    broker,
    transport: {
      get up() {
        return broker.up;
      },
      publish: (topic, payload, id) => laned.offer(topic, id ?? 0, payload),
      close: async () => {
        offKeys();
        laned.stop();
        await broker.close();
      },
    },
    redeliver: (topic) => laned.redeliver(topic),
    quiet: () => laned.quiet(),
  };
}
