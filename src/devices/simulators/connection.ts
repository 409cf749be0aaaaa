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
/** A connection that lasts this long is steady: the reasons said before may be said again. */
const STEADY_MS = 30_000;
/** A topic outside every device's rights: storeops's broker refuses it, an open broker grants it. */
const PROBE_TOPIC = 'storeops/probe/not-a-device-topic';

/** The one line a refused or failed connection gets (mqtt.js: a CONNACK refusal has its code). */
function connectionError(err: Error & { code?: unknown }, opts: { url: string; username: string }): string {
  if (err.code === 4 || err.code === 134)
    return `the broker at ${opts.url} refused the login of ${opts.username}: bad username or password (is --key this device's key, and is it provisioned?)`;
  if (err.code === 5 || err.code === 135) return `the broker at ${opts.url} refused the login of ${opts.username}: not authorized`;
  return `cannot reach the broker at ${opts.url}: ${err.message}`;
}

/**
 * Says whether the broker reached is storeops's: it keeps a device to its own topics, so a
 * subscription outside them is refused; another broker on the port (any MQTT server on 1883) takes it.
 */
function probeBroker(client: MqttClient, url: string, print: Print): void {
  client.subscribe(PROBE_TOPIC, { qos: 0 }, (err, granted) => {
    // mqtt.js reports a refused filter (SUBACK 0x80) as an error too, while still connected.
    if (err && !client.connected) return;
    if (err || granted?.[0]?.qos === 128) {
      print(`the broker at ${url} is storeops's: it keeps this device to its own topics`);
      return;
    }
    client.unsubscribe(PROBE_TOPIC);
    print(
      `the broker at ${url} is not this service's: it let this device subscribe outside its topics (another MQTT server on that port? give --mqtt, or run with the service's MQTT_PORT)`,
    );
  });
}

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
    username: opts.username,
    password: opts.password,
    clientId: opts.clientId,
    clean: opts.persistentSession === false,
    reconnectPeriod: 2_000,
    connectTimeout: 10_000,
  });
  const seen = new Set<string>();
  let chain = Promise.resolve();
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  // A reason is said once, not at every retry 2 s apart; a connection that lasts says them again.
  const said = new Set<string>();
  const once = (line: string) => {
    if (said.has(line)) return;
    said.add(line);
    print(line);
  };
  let steady: NodeJS.Timeout | undefined;
  let connected = false;
  let probed = false;

  client.on('connect', () => {
    connected = true;
    once(`connected to ${opts.url} as ${opts.username}`);
    steady = setTimeout(() => said.clear(), STEADY_MS).unref();
    // Subscribed on every connect: the service redelivers what this device has not acked when it subscribes.
    client.subscribe(opts.inbox, { qos: 1 }, (err, granted) => {
      if (err || granted?.[0]?.qos === 128) {
        once(`the broker refused the subscription to ${opts.inbox}${err ? `: ${err.message}` : ''}`);
        return;
      }
      once(`listening on ${opts.inbox}`);
      if (!probed) {
        probed = true;
        probeBroker(client, opts.url, print);
      }
      resolveReady();
    });
  });
  client.on('error', (err) => once(connectionError(err, opts)));
  client.on('close', () => {
    clearTimeout(steady);
    // Closed by the broker right after a good login, with no error: MQTT 3.1.1 cannot say why, and
    // the usual cause is the same client id connecting again (the broker keeps the newest).
    if (connected && !client.disconnecting) {
      once(
        `the broker closed the connection: another connection with client id ${opts.clientId} took over (this device running twice?), or the broker stopped; retrying every 2 s`,
      );
    }
    connected = false;
  });
  client.on('offline', () => once('offline, retrying every 2 s'));
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
      clearTimeout(steady);
      await chain;
      // Nothing in flight can be acked without a connection: a graceful end would wait for it forever.
      await client.endAsync(!client.connected);
    },
  };
}
