// Server-Sent Events over the live feed: the one way a route opens a stream (C6, C8, the console's).
// The route checks the credential and what is asked first (its errors are ordinary JSON answers),
// then hands the connection here. A stream subscribes to its location before it reads the state it
// sends first, so no change is missed between the two (at worst one is sent twice); then each batch
// of the location's events is given to the route's `onEvents`, one batch at a time per stream.
//
// A comment line every heartbeat keeps proxies from closing an idle stream; a client that does not
// read (more than MAX_BUFFERED bytes waiting) is cut off rather than held in memory; the app's
// shutdown ends every stream so the server can close.
//
// Limits (429 too_many_streams beyond each): a stream opened with a credential counts against its
// client (an IPv4 address, an IPv6 /64) and the instance; a stream opened with only a capability (a
// request's message_id) against that capability, its client's capability streams and the
// instance's capability streams, all far below, so that clients without credentials cannot take
// the slots a store's consoles and phones behind the same address need.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventRow } from '../events/log.ts';
import { clientBound } from '../http/client-address.ts';
import { AppError } from '../http/errors.ts';
import type { LiveFeed } from './feed.ts';

/** The contract asks for a comment at least every 25 s. */
export const HEARTBEAT_MS = 20_000;
/** Bytes a stream may have waiting for a slow client before it is closed (the client reconnects). */
const MAX_BUFFERED = 1 << 20;
export interface StreamLimits {
  /** Streams with a credential per client: a store's phones and tablets share one address behind
   * its NAT, so this is generous; it stops one client holding every socket. */
  perClient: number;
  /** Streams of an instance, all kinds. */
  total: number;
  /** Streams opened with one capability (a customer's tracking page, in a tab or two). */
  perCapability: number;
  /** Capability streams per client (customers on a store's guest network share its address). */
  capabilityPerClient: number;
  /** Capability streams of an instance: the rest is kept for streams with a credential. */
  capabilityTotal: number;
}

export const STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({
  perClient: 500,
  total: 10_000,
  perCapability: 5,
  capabilityPerClient: 50,
  capabilityTotal: 2_000,
});

export interface SseSink {
  /** Sends one event (`data` as JSON); false once the stream is closed. */
  send(event: string, data: unknown): boolean;
  readonly closed: boolean;
  /** Ends the stream for good: the client is asked to wait `retryMs` before it reconnects. */
  finish(retryMs: number): void;
}

export interface StreamSpec {
  locationId: number;
  /** What the client gets first (the current state). */
  initial?: (sink: SseSink) => Promise<void>;
  /** A batch of the location's committed events, in commit order. */
  onEvents: (events: readonly EventRow[], sink: SseSink) => Promise<void>;
  /** Whether the stream's credential still holds (a console session: not signed out, not idle);
   * asked before each batch and at each heartbeat, and the stream ends once it answers false. */
  stillAllowed?: () => Promise<boolean>;
  /** A name under which `endTagged` ends the stream at once (the console's session). */
  tag?: string;
  /** The capability the stream was opened with when it presents no credential (a message_id):
   * it is counted under the capability limits. */
  capability?: string;
}

export interface LiveStreamsDeps {
  feed: LiveFeed;
  heartbeatMs?: number;
  log?: { warn(obj: object, msg: string): void };
  limits?: Partial<StreamLimits>;
}

export class LiveStreams {
  readonly #feed: LiveFeed;
  readonly #heartbeatMs: number;
  readonly #log: LiveStreamsDeps['log'];
  readonly #open = new Set<() => void>();
  readonly #tagged = new Map<string, Set<() => void>>();
  /** Open streams by what a limit counts (see `#countsOf`). */
  readonly #counts = new Map<string, number>();
  readonly #limits: StreamLimits;
  /** What the streams of a batch read once for all of them (see `shared`), by batch and key. */
  readonly #shared = new WeakMap<readonly EventRow[], Map<string, Promise<unknown>>>();
  #closing = false;

  constructor(deps: LiveStreamsDeps) {
    this.#feed = deps.feed;
    this.#heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS;
    this.#log = deps.log;
    this.#limits = { ...STREAM_LIMITS, ...deps.limits };
  }

  /** The feed the streams hear. */
  get feed(): LiveFeed {
    return this.#feed;
  }

  /** Open streams of this instance. */
  get size(): number {
    return this.#open.size;
  }

  /** Turns the reply into an event stream that lives until the client goes or the app closes. */
  async open(request: FastifyRequest, reply: FastifyReply, spec: StreamSpec): Promise<void> {
    // Counted at once, before anything is awaited: a burst of opens cannot all pass the check.
    const release = this.#reserve(this.#countsOf(clientBound(request.ip ?? ''), spec.capability));
    let chain: Promise<void> = Promise.resolve();
    let sink: Sink | null = null;
    let end = () => {};
    const allowed = async (): Promise<boolean> => {
      if (spec.stillAllowed === undefined || (await spec.stillAllowed())) return true;
      end();
      return false;
    };
    const subscription = this.#feed.subscribe(spec.locationId, (events) => {
      chain = chain
        .then(async () => {
          if (sink === null || sink.closed || !(await allowed())) return;
          await spec.onEvents(events, sink);
        })
        .catch((err: unknown) => this.#failed(sink, err));
    });
    try {
      await subscription.ready;
    } catch (err) {
      subscription.close();
      release();
      throw err;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no', // proxies that buffer responses would hold the events back
    });
    res.write(': stream open\n\n');
    const opened = new Sink(res);
    sink = opened;
    const heartbeat = setInterval(() => {
      chain = chain
        .then(async () => {
          if (await allowed()) opened.comment('heartbeat');
        })
        .catch((err: unknown) => this.#failed(opened, err));
    }, this.#heartbeatMs);
    heartbeat.unref();
    const tagged = spec.tag === undefined ? null : (this.#tagged.get(spec.tag) ?? this.#tagged.set(spec.tag, new Set()).get(spec.tag) ?? null);
    end = () => {
      if (!this.#open.delete(end)) return;
      release();
      clearInterval(heartbeat);
      tagged?.delete(end);
      if (tagged?.size === 0 && spec.tag !== undefined) this.#tagged.delete(spec.tag);
      subscription.close();
      opened.close();
    };
    this.#open.add(end);
    tagged?.add(end);
    request.raw.once('close', end);
    res.once('close', end);
    // A client gone while the subscription was being placed fired its close before these listeners.
    if (this.#closing || res.destroyed || request.raw.socket?.destroyed === true) end();
    if (spec.initial !== undefined) {
      chain = chain.then(() => spec.initial?.(opened)).catch((err: unknown) => this.#failed(opened, err));
    }
    await chain;
  }

  /**
   * One read for every stream of a batch: the feed hands the same batch to each stream of its
   * location, so streams that would read the same thing after it (a C8 stream's records) ask here
   * under one key and share the first one's read. Forgotten with the batch.
   */
  shared<T>(events: readonly EventRow[], key: string, read: () => Promise<T>): Promise<T> {
    let reads = this.#shared.get(events);
    if (reads === undefined) this.#shared.set(events, (reads = new Map()));
    let pending = reads.get(key) as Promise<T> | undefined;
    if (pending === undefined) reads.set(key, (pending = read()));
    return pending;
  }

  /** Ends this instance's streams opened with this tag (a console session signed out). */
  endTagged(tag: string): void {
    for (const end of [...(this.#tagged.get(tag) ?? [])]) end();
  }

  /** Ends every stream (the app is shutting down): clients see the stream end and reconnect. */
  closeAll(): void {
    this.#closing = true;
    for (const end of [...this.#open]) end();
  }

  /** What a new stream counts against, each with its limit. */
  #countsOf(client: string, capability: string | undefined): [key: string, limit: number][] {
    const l = this.#limits;
    if (capability === undefined)
      return [
        ['total', l.total],
        [`client ${client}`, l.perClient],
      ];
    return [
      ['total', l.total],
      [`capability ${capability}`, l.perCapability],
      [`capability-client ${client}`, l.capabilityPerClient],
      ['capability-total', l.capabilityTotal],
    ];
  }

  /** Takes a place under every count (429 when one is full); the function gives them back, once. */
  #reserve(counted: [key: string, limit: number][]): () => void {
    if (counted.some(([key, limit]) => (this.#counts.get(key) ?? 0) >= limit)) throw tooMany();
    for (const [key] of counted) this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const [key] of counted) {
        const left = (this.#counts.get(key) ?? 1) - 1;
        if (left <= 0) this.#counts.delete(key);
        else this.#counts.set(key, left);
      }
    };
  }

  #failed(sink: Sink | null, err: unknown): void {
    this.#log?.warn({ err }, 'a live stream failed and was closed; its client reconnects');
    sink?.close();
  }
}

const tooMany = () => new AppError(429, 'too_many_streams', 'too many open streams; close one or retry later', { headers: { 'retry-after': '30' } });

class Sink implements SseSink {
  readonly #res: FastifyReply['raw'];
  #closed = false;

  constructor(res: FastifyReply['raw']) {
    this.#res = res;
  }

  get closed(): boolean {
    return this.#closed || this.#res.destroyed;
  }

  send(event: string, data: unknown): boolean {
    return this.#write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): boolean {
    return this.#write(`: ${text}\n\n`);
  }

  finish(retryMs: number): void {
    this.#write(`retry: ${Math.trunc(retryMs)}\n\n`);
    this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#res.destroyed) this.#res.end();
  }

  #write(chunk: string): boolean {
    if (this.closed) return false;
    if (this.#res.writableLength > MAX_BUFFERED) {
      this.#res.destroy();
      this.#closed = true;
      return false;
    }
    this.#res.write(chunk);
    return true;
  }
}
