// Limits on what a device connection may make the embedded broker hold, checked on the bytes as
// they arrive, before aedes buffers anything: an MQTT packet announces its length in its fixed
// header, and aedes would otherwise wait (up to its connect timeout) for all of an announced
// 256 MB. The first packet must be a CONNECT of at most MAX_CONNECT bytes; any later packet from a
// device (acks, heard speech) at most MAX_PACKET. A connection that announces more is cut at once.
import { Duplex, Transform, type TransformCallback } from 'node:stream';

/** A CONNECT carries a client id, a username and a key: a few hundred bytes. */
export const MAX_CONNECT = 4 * 1024;
/** Devices send acks and heard speech (at most 2,000 characters): far below this. */
export const MAX_PACKET = 64 * 1024;

const CONNECT = 1;

export class PacketTooLarge extends Error {}

/** Passes MQTT bytes through, cutting the stream when a packet announces too many. */
export class MqttPacketGuard extends Transform {
  #first = true;
  /** Bytes of the current packet's body still to pass, or -1 while reading a fixed header. */
  #bodyLeft = -1;
  #header: number[] = [];

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#bodyLeft > 0) {
        const take = Math.min(this.#bodyLeft, chunk.length - i);
        this.#bodyLeft -= take;
        i += take;
        if (this.#bodyLeft === 0) this.#bodyLeft = -1;
        continue;
      }
      this.#header.push(chunk[i] as number);
      i++;
      const problem = this.#readHeader();
      if (problem !== null) {
        done(new PacketTooLarge(problem));
        return;
      }
    }
    done(null, chunk);
  }

  /** After each header byte: null while fine (the header may be incomplete), else the problem. */
  #readHeader(): string | null {
    const h = this.#header;
    if (h.length < 2) return null;
    let length = 0;
    let multiplier = 1;
    for (let k = 1; k < h.length; k++) {
      const byte = h[k] as number;
      length += (byte & 0x7f) * multiplier;
      if ((byte & 0x80) === 0) {
        const type = (h[0] as number) >> 4;
        if (this.#first && type !== CONNECT) return 'the first packet is not a CONNECT';
        const max = this.#first ? MAX_CONNECT : MAX_PACKET;
        if (length > max) return `a packet of ${length} bytes (at most ${max})`;
        this.#first = false;
        this.#header = [];
        this.#bodyLeft = length === 0 ? -1 : length;
        return null;
      }
      multiplier *= 128;
      if (k === 4) return 'a malformed packet length';
    }
    return null;
  }
}

/**
 * The connection as aedes should see it: what the device sends passes through the guard; what the
 * broker writes goes straight to the device. `onRefused` is told why a connection was cut.
 */
export function guardedConnection(connection: Duplex, onRefused: (why: string) => void): Duplex {
  const guard = new MqttPacketGuard();
  connection.pipe(guard);
  const duplex = Duplex.from({ readable: guard, writable: connection });
  guard.on('error', (err: Error) => {
    onRefused(err.message);
    connection.destroy();
    duplex.destroy();
  });
  connection.on('close', () => duplex.destroy());
  // A device vanishing mid-write is routine: aedes sees the close, and an error nobody listens to
  // (aedes stops listening once it closed the client) must not take the process down.
  duplex.on('error', () => {});
  return duplex;
}

/** Connections that have not logged in yet, per address: each holds a socket and a parser. Stores
 * put many devices behind one address, but each logs in within a moment of connecting. */
export const MAX_UNAUTHENTICATED_PER_ADDRESS = 32;
/** Failed logins per address or username in a minute before each further failure is slowed. */
export const LOGIN_FAILURES_BEFORE_DELAY = 10;
export const LOGIN_FAILURE_DELAY_MS = 2_000;

/** Counts the connections of each address that have not logged in. */
export class LoginAdmission {
  readonly #waiting = new Map<string, number>();
  readonly #pending = new WeakMap<object, string>();
  readonly #failures = new Map<string, { start: number; count: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A new connection; false when its address already has too many waiting to log in. */
  admit(connection: object, address: string): boolean {
    const waiting = this.#waiting.get(address) ?? 0;
    if (waiting >= MAX_UNAUTHENTICATED_PER_ADDRESS) return false;
    this.#waiting.set(address, waiting + 1);
    this.#pending.set(connection, address);
    return true;
  }

  /** The address a connection that has not logged in came from. */
  addressOf(connection: object): string | null {
    return this.#pending.get(connection) ?? null;
  }

  /** The connection logged in, or closed: it no longer waits. */
  settled(connection: object): void {
    const address = this.#pending.get(connection);
    if (address === undefined) return;
    this.#pending.delete(connection);
    const waiting = (this.#waiting.get(address) ?? 1) - 1;
    if (waiting <= 0) this.#waiting.delete(address);
    else this.#waiting.set(address, waiting);
  }

  /** A failed login: how long to wait before answering it (0 while within the budget). A
   * successful login is never delayed, whatever failed before it. */
  failed(address: string | null, username: string | null): number {
    const now = this.#now();
    let worst = 0;
    for (const key of [address === null ? null : `a ${address}`, username === null ? null : `u ${username}`]) {
      if (key === null) continue;
      let window = this.#failures.get(key);
      if (window === undefined || now - window.start >= 60_000) {
        if (this.#failures.size >= 100_000) this.#failures.clear();
        window = { start: now, count: 0 };
        this.#failures.set(key, window);
      }
      window.count++;
      worst = Math.max(worst, window.count);
    }
    return worst > LOGIN_FAILURES_BEFORE_DELAY ? LOGIN_FAILURE_DELAY_MS : 0;
  }
}
