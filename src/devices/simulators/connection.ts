// What both simulators share: a device's MQTT connection that subscribes to its inbox on every
// (re)connect, remembers which messages it already acted on, and acks every copy it receives.
import mqtt, { type MqttClient } from 'mqtt';

export type Print = (line: string) => void;

export interface Simulator {
  /** Resolves once connected and subscribed for the first time. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** A simulated device's connection. */
export interface DeviceConnection extends Simulator {
  /** Publishes JSON with QoS 1 on a topic the device may publish on. */
  publish(topic: string, body: unknown): Promise<void>;
}

export interface InboxMessage {
  id: string;
  body: Record<string, unknown>;
  /** Seen before: ack it again, do not act on it twice. */
  duplicate: boolean;
}

const REMEMBERED_IDS = 1_000;

export function connectDevice(opts: {
  url: string;
  username: string;
  password: string;
  clientId: string;
  inbox: string;
  idField: 'command_id' | 'message_id';
  print: Print;
  /** false: a clean session (tests); a real device keeps a persistent one. */
  persistentSession?: boolean;
  onMessage(message: InboxMessage, client: MqttClient): Promise<void>;
}): DeviceConnection {
  const { print } = opts;
  // A persistent session: a broker that keeps sessions queues what comes while this device is away.
  const client = mqtt.connect(opts.url, {
    username: opts.username, password: opts.password, clientId: opts.clientId, clean: opts.persistentSession === false, reconnectPeriod: 2_000, connectTimeout: 10_000,
  });
  const seen = new Set<string>();
  let chain = Promise.resolve();
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));

  client.on('connect', () => {
    print(`connected to ${opts.url} as ${opts.username}`);
    // Subscribed on every connect: the service redelivers what this device has not acked when it subscribes.
    client.subscribe(opts.inbox, { qos: 1 }, (err, granted) => {
      if (err || granted?.[0]?.qos === 128) {
        print(`the broker refused the subscription to ${opts.inbox}${err ? `: ${err.message}` : ''}`);
        return;
      }
      print(`listening on ${opts.inbox}`);
      resolveReady();
    });
  });
  client.on('error', (err) => print(`connection error: ${err.message}`));
  client.on('offline', () => print('offline, retrying'));
  client.on('message', (_topic, payload) => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
    } catch {
      print('ignored a message that is not JSON');
      return;
    }
    const id = body[opts.idField];
    if (typeof id !== 'string' || id === '') {
      print(`ignored a message without ${opts.idField}`);
      return;
    }
    const duplicate = seen.has(id);
    seen.add(id);
    if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value as string);
    // One message at a time, in the order they came.
    chain = chain.then(() => opts.onMessage({ id, body, duplicate }, client)).catch((err: unknown) => print(`failed: ${(err as Error).message}`));
  });

  return {
    ready,
    async publish(topic, body) {
      await client.publishAsync(topic, JSON.stringify(body), { qos: 1 });
    },
    async close() {
      await chain;
      await client.endAsync();
    },
  };
}
