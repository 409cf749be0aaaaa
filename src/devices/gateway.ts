// The device channel: the broker (embedded, or an external one the service is a client of), the
// dispatcher that publishes the transactional outbox, the acks coming back, and redelivery of what
// a device has not acknowledged.
//
// Delivery is at least once. A message is published by one dispatcher (rows are locked with
// FOR UPDATE SKIP LOCKED and the per-topic advisory lock keeps one device's messages in order), but
// a crash between the broker's PUBACK and the commit, or a redelivery, can bring a copy: devices
// dedupe by command_id / message_id and ack every copy. What goes to one device through the
// embedded broker passes its lane (lanes.ts: in order, within a byte budget); redelivery through
// an external broker is redelivery.ts; what devices send back is inbound.ts.
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
import { dispatchBatch, redeliverTopic, type DispatchContext } from './dispatch.ts';
import { receiveDeviceMessage, type HeardHandler } from './inbound.ts';
import { hasUnpublished, topicsDueForRedelivery } from './store.ts';
import { silentLogger, type GatewayLogger, type Transport } from './transport.ts';

export type { GatewayLogger } from './transport.ts';

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
}

/** External broker: first redelivery of an unacked message after this long, doubling. */
const REDELIVER_AFTER_S = 30;
const SWEEP_EVERY_MS = 5_000;

export class DeviceGateway {
  readonly #config: Config;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: GatewayLogger;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #autoDispatch: boolean;
  readonly #clientId: string;
  readonly #auth: BrokerAuthority;
  #channel: Channel | null = null;
  #broker: EmbeddedBroker | null = null;
  #transport: Transport | null = null;
  #stopped = true;
  #pollTimer: NodeJS.Timeout | null = null;
  #lastSweep = 0;
  #lastPollError = 0;
  /** Dispatches (and the external broker's sweep) of this process run one after another. */
  #chain: Promise<unknown> = Promise.resolve();
  #wakeQueued = false;
  readonly #acks: AckBatcher;
  readonly #busy = new Set<Promise<unknown>>();
  #offCommits: (() => void) | null = null;
  /** Device health: told of connections and of every message (health.ts). */
  #presence: PresenceSink | null = null;
  /** Radio voice actions: what an edge device heard (radio/<edge_id>/heard; the broker let only that edge publish it). */
  #heard: HeardHandler | null = null;

  constructor(opts: GatewayOptions) {
    this.#config = opts.config;
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log ?? silentLogger;
    this.#pollMs = opts.pollMs ?? 100;
    this.#batchSize = opts.batchSize ?? 100;
    this.#autoDispatch = opts.autoDispatch ?? true;
    this.#clientId = opts.clientId ?? opts.config.mqttClientId ?? `storeops-${crypto.randomBytes(6).toString('hex')}`;
    this.#auth = new BrokerAuthority(opts.db, opts.config.mqttUrl);
    this.#acks = new AckBatcher(this.#db, this.#clock, this.#log);
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
      dispatchContext: () => this.#dispatchContext(),
      track: (work) => void this.#track(work),
    });
    this.#channel = channel;
    this.#broker = channel.broker;
    this.#transport = channel.transport;
    this.#stopped = false;
    // Woken by the commits that queued device messages, on any instance.
    this.#offCommits = this.#db.commits.on('device_outbox', () => this.notify());
    this.#schedulePoll(0);
  }

  /** Stops polling, publishes what is still queued (the HTTP server is closed first, so nothing new
   * comes), closes the broker connection and records the last acks. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#offCommits?.();
    this.#offCommits = null;
    if (this.#pollTimer !== null) clearTimeout(this.#pollTimer);
    this.#auth.stop();
    await this.#chain;
    if (this.#autoDispatch && this.up) await this.dispatchPending().catch((err: unknown) => this.#pollFailed(err));
    await this.#transport?.close();
    await this.settle();
    this.#transport = null;
    this.#broker = null;
    this.#channel = null;
  }

  /** Wakes the dispatcher now. Commits that queue device messages do it themselves; never blocks. */
  notify(): void {
    if (this.#stopped || !this.#autoDispatch || this.#wakeQueued) return;
    this.#wakeQueued = true;
    setImmediate(() => {
      this.#wakeQueued = false;
      this.dispatchPending().catch((err: unknown) => this.#pollFailed(err));
    });
  }

  /** Publishes everything queued and due, batch after batch; returns how many were published. */
  dispatchPending(): Promise<number> {
    return this.#exclusive(async () => {
      let total = 0;
      for (;;) {
        const { published, more } = await this.#dispatchBatch();
        if (published < 0) return total;
        total += published;
        // A batch that took every due row it saw ends the drain: looking again would be a
        // transaction for nothing (rows queued since then come with their own notify()).
        if (!more) return total;
      }
    });
  }

  /** Sends a device again, in order, what it was sent and has not acked (it just (re)subscribed). */
  redeliverTo(topic: string): Promise<number> {
    if (this.#broker !== null) return this.#track(this.#channel?.redeliver(topic) ?? Promise.resolve(0));
    return this.#exclusive(() => this.#redeliver(topic, false));
  }

  /** External broker: redelivers the topics whose unacked messages are due again. */
  redeliverDue(): Promise<number> {
    return this.#exclusive(async () => {
      let total = 0;
      for (const topic of await topicsDueForRedelivery(this.#db, this.#clock.now(), 50)) {
        total += await this.#redeliver(topic, true);
      }
      return total;
    });
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

  /** Where device health hears of devices; set again, it replaces the previous one (apps sharing one gateway). */
  onPresence(sink: PresenceSink | null): void {
    this.#presence = sink;
  }

  /** Where messages on radio/<edge_id>/heard go; set again, it replaces the previous one. */
  onHeard(handler: HeardHandler | null): void {
    this.#heard = handler;
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

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => {});
    return this.#track(run);
  }

  #schedulePoll(delayMs: number): void {
    if (this.#stopped) return;
    this.#pollTimer = setTimeout(() => {
      this.#pollTimer = null;
      this.#poll()
        .catch((err: unknown) => this.#pollFailed(err))
        .finally(() => this.#schedulePoll(this.#pollMs));
    }, delayMs);
    this.#pollTimer.unref();
  }

  async #poll(): Promise<void> {
    if (!this.up) return;
    if (this.#autoDispatch && (await hasUnpublished(this.#db, this.#clock.now()))) await this.dispatchPending();
    if (this.external && Date.now() - this.#lastSweep >= SWEEP_EVERY_MS) {
      this.#lastSweep = Date.now();
      await this.redeliverDue();
    }
  }

  #pollFailed(err: unknown): void {
    // The database or broker being away is logged once a minute, not at every poll.
    if (Date.now() - this.#lastPollError < 60_000) return;
    this.#lastPollError = Date.now();
    this.#log.error({ err }, 'device dispatcher failed; retrying');
  }

  /** What the outbox transactions need, or null while the broker is away. */
  #dispatchContext(): DispatchContext | null {
    const transport = this.#transport;
    if (transport === null || !transport.up) return null;
    return { db: this.#db, transport, now: this.#clock.now(), redeliverAfterS: this.external ? REDELIVER_AFTER_S : null, log: this.#log };
  }

  async #dispatchBatch(): Promise<{ published: number; more: boolean }> {
    const c = this.#dispatchContext();
    return c === null ? { published: -1, more: false } : dispatchBatch(c, this.#batchSize);
  }

  async #redeliver(topic: string, onlyIfDue: boolean): Promise<number> {
    const c = this.#dispatchContext();
    return c === null ? 0 : redeliverTopic(c, topic, onlyIfDue);
  }

  #queueRedelivery(topic: string): void {
    if (this.#stopped) return;
    void this.#channel?.redeliver(topic);
  }

  #onDeviceMessage(topic: string, payload: Buffer): void {
    receiveDeviceMessage({ acks: this.#acks, presence: this.#presence, heard: this.#heard, log: this.#log, track: (w) => void this.#track(w) }, topic, payload);
  }
}
