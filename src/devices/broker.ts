// The embedded MQTT broker (aedes): plain MQTT on MQTT_PORT and MQTT over WebSocket on the HTTP
// server's /mqtt. Devices are authenticated and confined to their own topics here; the service
// itself publishes and subscribes inside the process, without a connection. Who may log in and
// what a device may do is broker-access.ts; each device's connections, broker-connections.ts.
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Aedes, type AedesPublishPacket, type Client } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { DEVICE_MESSAGE_SUBSCRIPTIONS, deviceName, inboxTopic, type DeviceIdentity } from './wire.ts';
import type { GatewayLogger, Transport } from './transport.ts';
import { guardedConnection, LoginAdmission } from './mqtt-guard.ts';
import { deviceAccess } from './broker-access.ts';
import { DeviceConnections } from './broker-connections.ts';

export interface EmbeddedBrokerHooks {
  /** Checks a device's key against the database. */
  authenticate(device: DeviceIdentity, key: string): Promise<boolean>;
  /** A device published a message in (an ack, a play report, heard speech; already authorized). */
  onDeviceMessage(topic: string, payload: Buffer): void;
  /** A device is (again) subscribed to its inbox: time to send what it has not acked. */
  onDeviceListening(device: DeviceIdentity): void;
  /** A device's connection is up, or closed (device health). */
  onConnected?(device: DeviceIdentity): void;
  onDisconnected?(device: DeviceIdentity): void;
}

const WEBSOCKET_PATH = '/mqtt';
/** Largest WebSocket frame a device may send: it only sends acks (what it receives is not limited). */
const MAX_WS_FRAME = 256 * 1024;

/** The remote address of a device's connection (a TCP socket; a WebSocket stream has none). */
function addressOf(connection: unknown): string | null {
  const address = (connection as { remoteAddress?: unknown } | undefined)?.remoteAddress;
  return typeof address === 'string' ? address : null;
}

export class EmbeddedBroker implements Transport {
  readonly #aedes: Aedes;
  readonly #server: net.Server;
  readonly #wss: WebSocketServer;
  readonly #sockets = new Set<net.Socket | Duplex>();
  readonly #log: GatewayLogger;
  readonly #admission: LoginAdmission;
  /** Each device's connections and the socket under each: what it holds for the device. */
  readonly #connections = new DeviceConnections();
  #closed = false;
  #lastRefusalLog = 0;
  /** The devices' clients that are connected, each with its device and the digest of its key. */
  readonly #clients = new Set<Client>();
  #devices = new WeakMap<Client, DeviceIdentity>();
  #keys = new WeakMap<Client, string>();

  private constructor(aedes: Aedes, log: GatewayLogger, admission: LoginAdmission) {
    this.#aedes = aedes;
    this.#log = log;
    this.#admission = admission;
    this.#server = net.createServer((socket) => this.#accept(socket));
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_FRAME });
  }

  static async start(opts: { port: number; host: string; hooks: EmbeddedBrokerHooks; log: GatewayLogger }): Promise<EmbeddedBroker> {
    const { hooks, log } = opts;
    const devices = new WeakMap<Client, DeviceIdentity>();
    const keys = new WeakMap<Client, string>();
    const admission = new LoginAdmission();
    const aedes = await Aedes.createBroker({
      // Messages being written to devices at once. aedes' default (100) would let a hundred devices
      // that do not read hold up everyone's messages; the lanes (lanes.ts) bound each device's bytes.
      concurrency: 100_000,
      ...deviceAccess({ authenticate: (device, key) => hooks.authenticate(device, key), devices, keys, admission, log }),
    });
    const broker = new EmbeddedBroker(aedes, log, admission);
    broker.#devices = devices;
    broker.#keys = keys;
    aedes.on('subscribe', (subscriptions, client) => {
      const device = devices.get(client);
      if (device === undefined) return;
      const inbox = inboxTopic(device);
      if (subscriptions.some((s) => s.topic === inbox && (s.qos as number) !== 128)) hooks.onDeviceListening(device);
    });
    aedes.on('clientReady', (client) => {
      const device = devices.get(client);
      if (device === undefined) return;
      log.info({ device: deviceName(device), clientId: client.id, clean: client.clean }, 'device connected');
      broker.#connections.connected(device, client.conn as Duplex);
      broker.#clients.add(client);
      hooks.onConnected?.(device);
      // A persistent session gets its subscriptions back without a SUBSCRIBE.
      const restored = (client as Client & { subscriptions?: Record<string, unknown> }).subscriptions ?? {};
      if (!client.clean && inboxTopic(device) in restored) hooks.onDeviceListening(device);
    });
    aedes.on('clientDisconnect', (client) => {
      const device = devices.get(client);
      if (device === undefined) return;
      log.info({ device: deviceName(device), clientId: client.id }, 'device disconnected');
      broker.#connections.disconnected(device, client.conn as Duplex);
      broker.#clients.delete(client);
      hooks.onDisconnected?.(device);
    });
    aedes.on('clientError', (client, err) => log.debug({ clientId: client.id, err: err.message }, 'device connection error'));
    for (const filter of DEVICE_MESSAGE_SUBSCRIPTIONS) {
      await new Promise<void>((resolve) => {
        aedes.subscribe(
          filter,
          (packet: AedesPublishPacket, cb: () => void) => {
            // Only a device's own ack topic gets here (authorizePublish); recording is asynchronous.
            if (packet.topic.startsWith('$')) return cb();
            hooks.onDeviceMessage(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload));
            cb();
          },
          resolve,
        );
      });
    }
    try {
      await broker.#listen(opts.port, opts.host);
    } catch (err) {
      await broker.close();
      throw err;
    }
    return broker;
  }

  /**
   * Ends the sessions of connected devices whose key is no longer theirs (rotated) or that may no
   * longer connect (disabled, deleted): `valid` answers, for each device and the digest of the key
   * it logged in with, whether that key still lets it in. Run after a commit that changed keys, on
   * every instance, so a device is cut off at once, not only at its next login.
   */
  async dropStale(valid: (sessions: { device: DeviceIdentity; keyDigest: string }[]) => Promise<boolean[]>): Promise<number> {
    const clients = [...this.#clients].filter((c) => this.#devices.has(c) && this.#keys.has(c));
    if (clients.length === 0) return 0;
    const verdicts = await valid(clients.map((c) => ({ device: this.#devices.get(c) as DeviceIdentity, keyDigest: this.#keys.get(c) as string })));
    let dropped = 0;
    clients.forEach((client, i) => {
      if (verdicts[i] === true) return;
      this.#log.info({ device: deviceName(this.#devices.get(client) as DeviceIdentity), clientId: client.id }, 'device key changed: session ended');
      client.close();
      dropped++;
    });
    return dropped;
  }

  #accept(socket: net.Socket | Duplex, req?: IncomingMessage): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    const address = addressOf(socket) ?? addressOf(req?.socket) ?? 'unknown';
    socket.on('error', () => {}); // a device vanishing mid-write is routine; aedes sees the close
    const connection = guardedConnection(socket, (why) => this.#refused(address, `connection cut: ${why}`));
    if (!this.#admission.admit(connection, address)) {
      this.#refused(address, 'connection refused: too many connections of this address have not logged in');
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    this.#connections.accepted(connection, socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.#admission.settled(connection);
    });
    this.#aedes.handle(connection, req);
  }

  /** Bytes written for the device and not yet taken by the operating system, over all its connections. */
  bytesQueuedFor(device: DeviceIdentity): number {
    return this.#connections.bytesQueuedFor(device);
  }

  /** Logged at most once a second: a flood must not flood the log too. */
  #refused(address: string, why: string): void {
    const now = Date.now();
    if (now - this.#lastRefusalLog < 1_000) return;
    this.#lastRefusalLog = now;
    this.#log.warn({ address }, `device ${why}`);
  }

  #listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  /** The TCP port devices connect to (the bound one when MQTT_PORT is 0). */
  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  get up(): boolean {
    return !this.#closed && this.#server.listening;
  }

  /** Takes over an HTTP upgrade to /mqtt; returns false for any other path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const path = (req.url ?? '').split('?')[0];
    if (path !== WEBSOCKET_PATH) return false;
    if (this.#closed) {
      socket.destroy();
      return true;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = createWebSocketStream(ws);
      this.#accept(stream, req);
    });
    return true;
  }

  /** Drops the WebSocket devices (the HTTP server is closing and waits for its sockets). */
  closeWebSockets(): void {
    for (const ws of this.#wss.clients) ws.terminate();
  }

  /**
   * Hands the message to the broker without waiting for it to reach the device: aedes calls back
   * only once every subscriber's socket took it, and a slow device fetching a long WAV must not
   * hold the dispatcher's transaction (on PGlite, the one database connection). A message that
   * never reaches the device is not acked, and is sent again when the device reconnects.
   * `onWritten` is told when aedes is done with it (written out, or dropped): the lanes'
   * byte budget (lanes.ts) counts a message until then.
   */
  publish(topic: string, payload: Buffer): Promise<void> {
    return this.publishCounted(topic, payload);
  }

  publishCounted(topic: string, payload: Buffer, onWritten?: () => void): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the embedded broker is closed'));
    let refused: Error | undefined;
    let returned = false;
    this.#aedes.publish({ cmd: 'publish', topic, payload, qos: 1, retain: false, dup: false }, (err?: Error) => {
      onWritten?.();
      if (!err) return;
      if (returned) this.#log.warn({ topic, err: err.message }, 'the embedded broker failed a message after taking it');
      else refused = err;
    });
    returned = true;
    return refused === undefined ? Promise.resolve() : Promise.reject(refused);
  }

  /** How many connections of the device are open. */
  connectionsOf(device: DeviceIdentity): number {
    return this.#connections.connectionsOf(device);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.closeWebSockets();
    await new Promise<void>((resolve) => this.#aedes.close(() => resolve()));
    // Connections that never sent CONNECT are not aedes clients yet.
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#wss.close();
  }
}
