// The service as a client of an external broker (MQTT_URL): it publishes device messages and
// subscribes to every device's acks. The broker itself authenticates devices, ideally by asking
// this service over HTTP (routes.ts).
import mqtt, { type MqttClient } from 'mqtt';
import { DEVICE_MESSAGE_SUBSCRIPTIONS } from './wire.ts';
import type { GatewayLogger, Transport } from './transport.ts';

export interface BrokerCredentials {
  username: string;
  password: string;
}

/** The credentials written in MQTT_URL (mqtt://user:password@host:port), if any. */
export function credentialsOf(url: string): BrokerCredentials | null {
  const parsed = new URL(url);
  if (parsed.username === '') return null;
  return { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
}

/** MQTT_URL without its password, for logs. */
export function redactBrokerUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

const CONNECT_TIMEOUT_MS = 10_000;
const RECONNECT_MS = 2_000;

export class ExternalBroker implements Transport {
  readonly #client: MqttClient;
  #closed = false;

  private constructor(client: MqttClient) {
    this.#client = client;
  }

  /**
   * Connects and subscribes to the acks. Resolves once subscribed, or after `waitMs` if the broker
   * cannot be reached yet: the service starts anyway, messages wait in the outbox, the client retries.
   */
  static async connect(opts: {
    url: string;
    clientId: string;
    /** clean: false with a stable client id: acks sent while the service restarts wait in the broker. */
    persistentSession: boolean;
    onDeviceMessage(topic: string, payload: Buffer): void;
    onConnect(): void;
    log: GatewayLogger;
    waitMs?: number;
  }): Promise<ExternalBroker> {
    const credentials = credentialsOf(opts.url);
    const client = mqtt.connect(opts.url, {
      clientId: opts.clientId,
      clean: !opts.persistentSession,
      protocolVersion: 4,
      reconnectPeriod: RECONNECT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      resubscribe: false, // subscribed on every connect below
      ...(credentials ?? {}),
    });
    const broker = new ExternalBroker(client);
    const where = redactBrokerUrl(opts.url);
    let announced = false;
    const subscribed = new Promise<void>((resolve) => {
      client.on('connect', (connack) => {
        opts.log.info({ broker: where, sessionPresent: connack.sessionPresent }, 'connected to the MQTT broker');
        client.subscribe(Object.fromEntries(DEVICE_MESSAGE_SUBSCRIPTIONS.map((t) => [t, { qos: 1 as const }])), (err, granted) => {
          const refused = (granted ?? []).filter((g) => g.qos === 128).map((g) => g.topic);
          if (err || refused.length > 0) opts.log.error({ err, refused }, 'the broker refused the ack subscriptions');
          resolve();
          opts.onConnect();
        });
      });
    });
    client.on('message', (topic, payload) => opts.onDeviceMessage(topic, payload));
    client.on('error', (err) => {
      if (!announced) opts.log.warn({ broker: where, err: err.message }, 'MQTT broker connection error');
      announced = true;
    });
    client.on('offline', () => {
      if (!broker.#closed) opts.log.warn({ broker: where }, 'MQTT broker unreachable, retrying');
    });
    client.on('connect', () => {
      announced = false;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([subscribed, new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.waitMs ?? 5_000)))]);
    clearTimeout(timer);
    return broker;
  }

  get up(): boolean {
    return this.#client.connected;
  }

  publish(topic: string, payload: Buffer): Promise<void> {
    if (!this.#client.connected) return Promise.reject(new Error('not connected to the MQTT broker'));
    return new Promise((resolve, reject) => {
      this.#client.publish(topic, payload, { qos: 1 }, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A graceful end waits for in-flight publishes; a broker that is gone would make it wait forever.
    let timer: NodeJS.Timeout | undefined;
    const graceful = this.#client.endAsync(false);
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(() => resolve(this.#client.endAsync(true)), 3_000);
    });
    await Promise.race([graceful, forced]).finally(() => clearTimeout(timer));
  }
}
