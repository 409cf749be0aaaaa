// The device channel: the broker (embedded, or an external one the service is a client of), the
// dispatcher that publishes the transactional outbox, the acks coming back, and redelivery of what
// a device has not acknowledged.
//
// Delivery is at least once. A message is published by one dispatcher (rows are locked with
// FOR UPDATE SKIP LOCKED and the per-topic advisory lock keeps one device's messages in order), but
// a crash between the broker's PUBACK and the commit, or a redelivery, can bring a copy: devices
// dedupe by command_id / message_id and ack every copy. The dispatcher is dispatcher.ts; what goes
// to one device through the embedded broker passes its lane (lanes.ts: in order, within a byte
// budget); redelivery through an external broker is redelivery.ts; what devices send back is
// inbound.ts. This class holds them together for the service.
import type { IncomingMessage } from 'node:http';
import crypto from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import type { EmbeddedBroker } from './broker.ts';
import { startChannel, type Channel } from './channel.ts';
import { BrokerAuthority } from './broker-auth.ts';
import { inboxTopic, type DeviceIdentity } from './wire.ts';
import { AckBatcher, type AckHandler } from './acks.ts';
import type { PresenceSink } from './health.ts';
import { OutboxDispatcher } from './dispatcher.ts';
import { receiveDeviceMessage, type HeardHandler } from './inbound.ts';
import { silentLogger, type GatewayLogger, type Transport } from './transport.ts';

export type { GatewayLogger } from './transport.ts';

/** Where the service hears of devices through the gateway, given when it is built (compose()). */
export interface GatewayListeners {
  /** Device health: told of connections and of every message (health.ts). */
  presence: PresenceSink;
  /** Radio voice actions: what an edge device heard (radio/<edge_id>/heard; the broker let only that edge publish it). */
  heard: HeardHandler;
}

export interface GatewayOptions {
  config: Config;
  db: Db;
  clock: Clock;
  log?: GatewayLogger;
  /** How often the dispatcher looks for queued messages (ms); a commit that queued some wakes it at once. */
  pollMs?: number;
  /** Messages locked and published per transaction. */
  batchSize?: number;
  /** false: nothing is published until dispatchPending() is called (tests that stop "between"). */
  autoDispatch?: boolean;
  /** The client id on an external broker; default MQTT_CLIENT_ID, else a random one. */
  clientId?: string;
  /** Where device health and voice actions hear of devices; default: nowhere. */
  listeners?: GatewayListeners;
}

export class DeviceGateway {
  readonly #config: Config;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: GatewayLogger;
  readonly #clientId: string;
  readonly #auth: BrokerAuthority;
  #channel: Channel | null = null;
  #broker: EmbeddedBroker | null = null;
  #transport: Transport | null = null;
  #stopped = true;
  readonly #dispatcher: OutboxDispatcher;
  readonly #acks: AckBatcher;
  readonly #busy = new Set<Promise<unknown>>();
  readonly #presence: PresenceSink | null;
  readonly #heard: HeardHandler | null;

  constructor(opts: GatewayOptions) {
    this.#config = opts.config;
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log ?? silentLogger;
    this.#clientId = opts.clientId ?? opts.config.mqttClientId ?? `storeops-${crypto.randomBytes(6).toString('hex')}`;
    this.#auth = new BrokerAuthority(opts.db, opts.config.mqttUrl);
    this.#acks = new AckBatcher(this.#db, this.#clock, this.#log);
    this.#presence = opts.listeners?.presence ?? null;
    this.#heard = opts.listeners?.heard ?? null;
    this.#dispatcher = new OutboxDispatcher({
      db: this.#db,
      clock: this.#clock,
      log: this.#log,
      pollMs: opts.pollMs ?? 100,
      batchSize: opts.batchSize ?? 100,
      autoDispatch: opts.autoDispatch ?? true,
      external: this.external,
      transport: () => this.#transport,
      track: (work) => this.#track(work),
    });
  }

  get external(): boolean {
    return this.#config.mqttUrl !== null;
  }

  /** The broker is reachable (embedded: listening; external: connected). */
  get up(): boolean {
    return this.#transport?.up ?? false;
  }

  /** The embedded broker's bound TCP port (null with an external broker or before start). */
  get brokerPort(): number | null {
    return this.#broker?.port ?? null;
  }

  /** Where a device connects over TCP: the embedded broker on this host, or MQTT_URL without the service's credentials. */
  get deviceUrl(): string | null {
    if (this.#broker !== null) return `mqtt://127.0.0.1:${this.#broker.port}`;
    if (this.#config.mqttUrl === null) return null;
    const url = new URL(this.#config.mqttUrl);
    url.username = '';
    url.password = '';
    return url.toString();
  }

  async start(): Promise<void> {
    if (!this.#stopped) return;
    const channel = await startChannel({
      config: this.#config,
      db: this.#db,
      clock: this.#clock,
      log: this.#log,
      clientId: this.#clientId,
      onMessage: (topic, payload) => this.#onDeviceMessage(topic, payload),
      onConnected: (device) => this.#presence?.connected(device),
      onDisconnected: (device) => this.#presence?.disconnected(device),
      onBrokerConnect: () => this.notify(),
      dispatchContext: () => this.#dispatcher.context(),
      track: (work) => void this.#track(work),
    });
    this.#channel = channel;
    this.#broker = channel.broker;
    this.#transport = channel.transport;
    this.#stopped = false;
    this.#dispatcher.start();
  }

  /** Stops polling, publishes what is still queued (the HTTP server is closed first, so nothing new
   * comes), closes the broker connection and records the last acks. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#auth.stop();
    await this.#dispatcher.stop();
    await this.#transport?.close();
    await this.settle();
    this.#transport = null;
    this.#broker = null;
    this.#channel = null;
  }

  /** Wakes the dispatcher now. Commits that queue device messages do it themselves; never blocks. */
  notify(): void {
    if (!this.#stopped) this.#dispatcher.notify();
  }

  /** Publishes everything queued and due, batch after batch; returns how many were published. */
  dispatchPending(): Promise<number> {
    return this.#dispatcher.dispatchPending();
  }

  /** Sends a device again, in order, what it was sent and has not acked (it just (re)subscribed). */
  redeliverTo(topic: string): Promise<number> {
    if (this.#broker !== null) return this.#track(this.#channel?.redeliver(topic) ?? Promise.resolve(0));
    return this.#dispatcher.redeliver(topic);
  }

  /** External broker: redelivers the topics whose unacked messages are due again. */
  redeliverDue(): Promise<number> {
    return this.#dispatcher.redeliverDue();
  }

  /**
   * Acts on the first ack of each message to one kind of device, in the transaction that records
   * it (compose() registers the features' handlers). A name registered again is replaced.
   */
  onAcked(name: string, kind: DeviceIdentity['kind'], handler: AckHandler): void {
    this.#acks.onAcked(name, kind, handler);
  }

  /** Resolves once nothing is in flight: dispatches, redeliveries, acks being recorded (a lane
   * waiting for its device to read what it was sent is not "in flight"). */
  async settle(): Promise<void> {
    for (;;) {
      await this.#channel?.quiet();
      if (this.#busy.size === 0) return;
      await Promise.allSettled([...this.#busy]);
    }
  }

  /** The device behind MQTT credentials, or null. For an external broker's HTTP auth calls. */
  async authenticateDevice(username: string, password: string): Promise<DeviceIdentity | null> {
    const device = await this.#auth.device(username, password);
    if (device !== null) this.#presence?.seen(device); // an external broker's auth call: the device is there
    return device;
  }

  /** A device was heard from outside the broker (a locker's status report). */
  seen(device: DeviceIdentity): void {
    this.#presence?.seen(device);
  }

  /** Are these the service's own credentials on the external broker (from MQTT_URL)? */
  isServiceLogin(username: string, password: string | null): boolean {
    return this.#auth.isServiceLogin(username, password);
  }

  /** An external broker let a device subscribe to its inbox: redeliver once the subscription exists. */
  deviceSubscribing(device: DeviceIdentity): void {
    if (!this.#stopped) this.#auth.afterSubscribe(() => this.#queueRedelivery(inboxTopic(device)));
  }

  /** Bytes the embedded broker holds written for a device and not yet taken by its sockets (0 with an external broker). */
  bytesQueuedFor(device: DeviceIdentity): number {
    return this.#broker?.bytesQueuedFor(device) ?? 0;
  }

  /** MQTT over WebSocket on the HTTP server: takes over an upgrade to /mqtt (embedded broker only). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (this.#broker === null) return false;
    return this.#broker.handleUpgrade(req, socket, head);
  }

  /** The HTTP server is closing: its WebSocket devices must go, or it would wait for them. */
  closeWebSockets(): void {
    this.#broker?.closeWebSockets();
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#busy.add(promise);
    void promise.finally(() => this.#busy.delete(promise)).catch(() => {});
    return promise;
  }

  #queueRedelivery(topic: string): void {
    if (this.#stopped) return;
    void this.#channel?.redeliver(topic);
  }

  #onDeviceMessage(topic: string, payload: Buffer): void {
    receiveDeviceMessage({ acks: this.#acks, presence: this.#presence, heard: this.#heard, log: this.#log, track: (w) => void this.#track(w) }, topic, payload);
  }
}
