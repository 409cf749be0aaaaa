// Each device's connections to the embedded broker (as aedes sees them) and the socket under each:
// how many a device has open (its lane is reset when the last one closes), and the bytes they hold
// written for it and not yet taken by the system (its lane's byte budget counts them).
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { deviceName, type DeviceIdentity } from './wire.ts';

export class DeviceConnections {
  readonly #connections = new Map<string, Set<Duplex>>();
  readonly #socketOf = new WeakMap<Duplex, net.Socket | Duplex>();

  /** The socket under a connection aedes is given (a guarded stream over it). */
  accepted(connection: Duplex, socket: net.Socket | Duplex): void {
    this.#socketOf.set(connection, socket);
  }

  connected(device: DeviceIdentity, connection: Duplex): void {
    const name = deviceName(device);
    const set = this.#connections.get(name) ?? new Set<Duplex>();
    set.add(connection);
    this.#connections.set(name, set);
  }

  disconnected(device: DeviceIdentity, connection: Duplex): void {
    const name = deviceName(device);
    const set = this.#connections.get(name);
    set?.delete(connection);
    if (set?.size === 0) this.#connections.delete(name);
  }

  /** Bytes written for the device and not yet taken by the operating system, over all its connections. */
  bytesQueuedFor(device: DeviceIdentity): number {
    let total = 0;
    for (const connection of this.#connections.get(deviceName(device)) ?? []) {
      total += connection.writableLength + (this.#socketOf.get(connection)?.writableLength ?? 0);
    }
    return total;
  }

  /** How many connections of the device are open. */
  connectionsOf(device: DeviceIdentity): number {
    return this.#connections.get(deviceName(device))?.size ?? 0;
  }
}
