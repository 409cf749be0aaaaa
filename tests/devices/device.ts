// A test device: a real mqtt.js client, as locker firmware or a radio edge device would use.
import crypto from 'node:crypto';
import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Db } from '../../src/db/db.ts';
import { enqueueDeviceMessage } from '../../src/devices/outbox.ts';
import type { Clock } from '../../src/clock.ts';

export interface Received {
  topic: string;
  body: Record<string, unknown>;
}

export class TestDevice {
  readonly client: MqttClient;
  readonly received: Received[] = [];
  #waiters: { match: (m: Received) => boolean; resolve: (m: Received) => void }[] = [];

  private constructor(client: MqttClient) {
    this.client = client;
    // Attached before CONNACK: a persistent session's queued messages come right after it.
    client.on('message', (topic, payload) => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      } catch {
        body = { raw: payload.toString('utf8') };
      }
      const message = { topic, body };
      this.received.push(message);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.match(message)) return true;
        w.resolve(message);
        return false;
      });
    });
  }

  /** Connects (or rejects with the broker's refusal); no automatic reconnect. */
  static connect(url: string, opts: IClientOptions = {}): Promise<TestDevice> {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 10_000, clientId: `dev-${crypto.randomBytes(6).toString('hex')}`, ...opts });
    const device = new TestDevice(client);
    return new Promise((resolve, reject) => {
      client.once('connect', () => resolve(device));
      client.once('error', (err) => {
        client.end(true);
        reject(err);
      });
      client.once('close', () => reject(new Error('connection closed before CONNACK')));
    });
  }

  /** Granted QoS per filter (128: refused). */
  async subscribe(topic: string): Promise<number> {
    try {
      const [grant] = await this.client.subscribeAsync(topic, { qos: 1 });
      return grant?.qos ?? -1;
    } catch (err) {
      // mqtt.js turns a refused filter (granted 0x80) into an error carrying the SUBACK.
      const granted = (err as { packet?: { granted?: number[] } }).packet?.granted;
      if (granted?.[0] === 128) return 128;
      throw err;
    }
  }

  /** The first message (already received or still to come) that matches. */
  next(match: (m: Received) => boolean): Promise<Received> {
    const seen = this.received.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  count(match: (m: Received) => boolean): number {
    return this.received.filter(match).length;
  }

  async publish(topic: string, body: unknown): Promise<void> {
    await this.client.publishAsync(topic, JSON.stringify(body), { qos: 1 });
  }

  /** Resolves when the broker closes this connection. */
  closed(): Promise<void> {
    if (this.client.disconnected || !this.client.connected) return Promise.resolve();
    return new Promise((resolve) => this.client.once('close', () => resolve()));
  }

  async end(): Promise<void> {
    await this.client.endAsync();
  }
}

/** Waits until `check` holds (the database catching up with an ack); the test's own timeout bounds it. */
export async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

export const byKey = (key: string) => (m: Received) => m.body.command_id === key || m.body.message_id === key;

/** Queues a command for a locker as the lockers feature does: in a committed transaction. */
export async function queueCommand(db: Db, clock: Clock, lockerId: number, extra: Record<string, unknown> = {}): Promise<string> {
  const key = crypto.randomUUID();
  await db.tx((q) =>
    enqueueDeviceMessage(
      q,
      {
        topic: `lockers/${lockerId}/commands`,
        payload: { command_id: key, cabinet_key: 1, command: 'open', door: 'front', issued_at: clock.now().toISOString(), ...extra },
        key,
      },
      clock.now(),
    ),
  );
  return key;
}

/** Queues a play message for an edge device, as the radio feature does. */
export async function queuePlay(db: Db, clock: Clock, edgeId: string, text = 'Cleanup on aisle five'): Promise<string> {
  const key = crypto.randomUUID();
  await db.tx((q) =>
    enqueueDeviceMessage(
      q,
      {
        topic: `radio/${edgeId}/play`,
        payload: {
          message_id: key,
          text,
          actor: 'test',
          mime: 'audio/wav',
          audio: Buffer.from('RIFF....WAVE').toString('base64'),
          queued_at: clock.now().toISOString(),
        },
        key,
      },
      clock.now(),
    ),
  );
  return key;
}

export interface OutboxState {
  published_at: string | null;
  acked_at: string | null;
  publish_attempts: number;
  ack: Record<string, unknown> | null;
}

export async function outboxState(db: Db, key: string): Promise<OutboxState> {
  const [row] = await db.query<OutboxState>('SELECT published_at, acked_at, publish_attempts, ack FROM device_outbox WHERE message_key = $1', [key]);
  if (row === undefined) throw new Error(`no outbox message ${key}`);
  return row;
}

export interface BareBroker {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A plain aedes broker, anonymous and without our rules: the "external broker" of a test. */
export async function startBareBroker(port = 0): Promise<BareBroker> {
  const aedes = await Aedes.createBroker();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    aedes.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${bound}`,
    port: bound,
    async close() {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A locker's MQTT login: its username and key. */
export const lockerLogin = (world: { lockerId: number; lockerKey: string }) => ({ username: `locker:${world.lockerId}`, password: world.lockerKey });
/** An edge device's MQTT login: its username and key. */
export const edgeLogin = (world: { edgeId: string; edgeKey: string }) => ({ username: `edge:${world.edgeId}`, password: world.edgeKey });
