// Device health (contract section 14): when each device was last seen and whether it is online.
// Sightings (an MQTT connection or disconnection, any message, a locker's status report) arrive
// far more often than anyone needs them written, so they are kept in memory, one per device, and
// written in one statement per flush (every second, one at a time). A device still connected to
// the embedded broker is counted as seen again every third of DEVICE_OFFLINE_SECONDS, so a live
// connection keeps it online without a write per message. Going online is decided by the flush's upsert,
// going offline by the sweep (a durable job, once across instances); each writes its event once.
import { mayReach, type OrganizationActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { notFound } from '../http/errors.ts';
import { WorkLoop } from '../work/loop.ts';
import type { JobHandlers } from '../jobs/scheduler.ts';
import { devicesOfLocation, locationOrganization, OFFLINE_SWEEP_JOB, recordSightings, sweepOffline, type DeviceRow, type SeenDevice } from './health-store.ts';
import type { GatewayLogger } from './transport.ts';
import { deviceName, type DeviceIdentity } from './wire.ts';

/** What the device channel tells about devices (the gateway calls it; compose() gives it to the gateway in GatewayListeners). */
export interface PresenceSink {
  /** A message, an authentication or a report from the device. */
  seen(device: DeviceIdentity): void;
  /** The device connected to the embedded broker. */
  connected(device: DeviceIdentity): void;
  /** One of its connections to the embedded broker closed. */
  disconnected(device: DeviceIdentity): void;
}

export interface DeviceHealthOptions {
  db: Db;
  clock: Clock;
  offlineSeconds: number;
  log?: Pick<GatewayLogger, 'error'>;
  /** How often sightings are written (ms). */
  flushMs?: number;
}

const keyOf = deviceName;
const rowOf = (device: DeviceIdentity, seenAt: Date): SeenDevice =>
  device.kind === 'locker' ? { kind: 'locker', deviceId: String(device.lockerId), seenAt } : { kind: 'edge', deviceId: device.edgeId, seenAt };

export class DeviceHealth implements PresenceSink {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #offlineSeconds: number;
  /** Writes the sightings every flush interval, one write at a time. */
  readonly #loop: WorkLoop<void>;
  /** The latest sighting of each device since the last flush. */
  #pending = new Map<string, SeenDevice>();
  /** Devices connected to the embedded broker, with their number of connections. */
  readonly #connections = new Map<string, { device: DeviceIdentity; count: number }>();
  #lastHeartbeat = 0;

  constructor(opts: DeviceHealthOptions) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#offlineSeconds = opts.offlineSeconds;
    this.#loop = new WorkLoop(() => this.#flush(), {
      // Well within DEVICE_OFFLINE_SECONDS, so a device that is seen never looks offline to the sweep.
      pollMs: opts.flushMs ?? Math.min(1_000, (this.#offlineSeconds * 1000) / 4),
      onError: (err) => opts.log?.error({ err }, 'device health: could not record last-seen times; retrying'),
    });
  }

  seen(device: DeviceIdentity): void {
    this.#pending.set(keyOf(device), rowOf(device, this.#clock.now()));
  }

  connected(device: DeviceIdentity): void {
    const key = keyOf(device);
    const entry = this.#connections.get(key);
    if (entry === undefined) this.#connections.set(key, { device, count: 1 });
    else entry.count++;
    this.seen(device);
  }

  disconnected(device: DeviceIdentity): void {
    const key = keyOf(device);
    const entry = this.#connections.get(key);
    if (entry !== undefined && --entry.count <= 0) this.#connections.delete(key);
    this.seen(device);
  }

  /** Writes what was seen since the last flush (and, when due, the connected devices). */
  flush(): Promise<void> {
    return this.#loop.runNow();
  }

  async #flush(): Promise<void> {
    const now = this.#clock.now();
    if (now.getTime() - this.#lastHeartbeat >= (this.#offlineSeconds * 1000) / 3) {
      this.#lastHeartbeat = now.getTime();
      for (const [key, { device }] of this.#connections) this.#pending.set(key, rowOf(device, now));
    }
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    try {
      await this.#db.statement((q) => recordSightings(q, batch, this.#offlineSeconds, now));
    } catch (err) {
      // Kept for the next flush, unless a newer sighting of the device came meanwhile.
      for (const s of batch) {
        const key = `${s.kind}:${s.deviceId}`; // keyOf's form
        if (!this.#pending.has(key)) this.#pending.set(key, s);
      }
      throw err;
    }
  }

  /** The offline sweep's job (compose() registers it). */
  jobs(): JobHandlers {
    return {
      [OFFLINE_SWEEP_JOB]: async (q, payload) => {
        await sweepOffline(q, this.#offlineSeconds, payload.slot === 1 ? 0 : 1, this.#clock.now());
      },
    };
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops the loop and writes the last sightings. */
  async stop(): Promise<void> {
    await this.#loop.stop();
    await this.flush().catch(() => {});
  }
}

export interface DeviceListDeps {
  db: Queryable;
  clock: Clock;
  offlineSeconds: number;
}

/** D1: the location's devices; a location outside the actor's reach is not found. */
export async function listDevices(deps: DeviceListDeps, actor: OrganizationActor, locationId: number): Promise<DeviceRow[]> {
  const organizationId = await locationOrganization(deps.db, locationId);
  if (organizationId === undefined || !mayReach(actor, { organizationId, locationId })) {
    throw notFound(`location ${locationId}`);
  }
  return devicesOfLocation(deps.db, locationId, deps.offlineSeconds, deps.clock.now());
}

export const deviceView = (d: DeviceRow) => ({
  kind: d.kind,
  id: d.id,
  name: d.name,
  online: d.online,
  last_seen_at: d.last_seen_at,
  voltage: d.voltage,
  firmware: d.firmware,
  ip: d.ip,
  queued_messages: d.queued_messages,
});
