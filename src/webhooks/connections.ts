// Keep-alive connections to webhook receivers: one http or https Agent per origin, so a busy
// endpoint's attempts reuse a few open connections instead of opening (looking up, checking,
// handshaking, closing) one each, which was most of a delivery's CPU.
//
// The address guard stays where it was, at connect time: the agent's own lookup hands the socket
// only addresses it allows, so every connection in the pool was made to an address that was
// checked, and a reused one goes where the check let it. A host that resolves elsewhere later is
// looked up (and checked) again for the next connection it needs; its open ones still go to the
// address checked when they were made, never to the new one.
//
// Bounded: at most `perOrigin` connections to one origin (more attempts wait for one, within their
// time limit); an idle connection closed after a few seconds, sooner when the receiver says so;
// an origin unused for a minute has its agent dropped.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { isPrivateAddress } from './rules.ts';

export interface ConnectionOptions {
  /** WEBHOOK_ALLOW_PRIVATE: loopback, link-local and private addresses are allowed. */
  allowPrivate: boolean;
  /** Connections to one origin at most, in use or idle (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perOrigin: number;
  /** An idle connection is closed after this long (the receiver's `Keep-Alive: timeout` less a
   * second, when that is shorter): below the 5 s of Node's servers and the minute of most proxies. */
  idleMs?: number;
  /** An origin not used for this long has its agent dropped. */
  forgetMs?: number;
  /** How hosts are resolved, and which addresses are refused: tests replace them, as no public
   * address can be served on a test machine. */
  resolve?: typeof dns.lookup;
  refused?: (address: string) => boolean;
}

interface Origin {
  agent: http.Agent;
  usedAt: number;
}

export class WebhookConnections {
  readonly allowPrivate: boolean;
  readonly #perOrigin: number;
  readonly #idleMs: number;
  readonly #forgetMs: number;
  readonly #refused: (address: string) => boolean;
  readonly #lookup: LookupFunction | undefined;
  readonly #origins = new Map<string, Origin>();
  #sweptAt = Date.now();

  constructor(opts: ConnectionOptions) {
    this.allowPrivate = opts.allowPrivate;
    this.#perOrigin = opts.perOrigin;
    this.#idleMs = opts.idleMs ?? 4_000;
    this.#forgetMs = opts.forgetMs ?? 60_000;
    this.#refused = opts.refused ?? isPrivateAddress;
    this.#lookup = opts.allowPrivate ? undefined : allowedLookup(opts.resolve ?? dns.lookup, this.#refused);
  }

  /** Why a host may not be connected to when it is a literal address (connected to without a
   * lookup, so checked here); null: it may, or it is a name (checked when connecting). */
  literalProblem(host: string): string | null {
    if (this.allowPrivate || net.isIP(host) === 0 || !this.#refused(host)) return null;
    return `refused: ${host} is a private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`;
  }

  /** The agent of the URL's origin, made when first needed. */
  agentFor(url: URL): http.Agent {
    const now = Date.now();
    if (now - this.#sweptAt > this.#forgetMs) this.#sweep(now);
    let origin = this.#origins.get(url.origin);
    if (origin === undefined) {
      const options: http.AgentOptions = {
        keepAlive: true,
        maxSockets: this.#perOrigin,
        maxFreeSockets: this.#perOrigin,
        // The connection used last goes first: the others stay idle and are closed.
        scheduling: 'lifo',
        // Agent options override the request's: no connection of this agent skips the guard.
        timeout: this.#idleMs,
        ...(this.#lookup === undefined ? {} : { lookup: this.#lookup }),
      };
      const agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
      origin = { agent, usedAt: now };
      this.#origins.set(url.origin, origin);
    }
    origin.usedAt = now;
    return origin.agent;
  }

  /** Origins with an agent (the bound on memory is tested by it). */
  get origins(): number {
    return this.#origins.size;
  }

  /** Every connection closed, in use or idle (the service is stopping). */
  close(): void {
    for (const { agent } of this.#origins.values()) agent.destroy();
    this.#origins.clear();
  }

  /** Drops the agents of origins unused for forgetMs that have no connection in use. */
  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, { agent, usedAt }] of this.#origins) {
      if (now - usedAt <= this.#forgetMs || Object.keys(agent.sockets).length > 0 || Object.keys(agent.requests).length > 0) continue;
      agent.destroy();
      this.#origins.delete(key);
    }
  }
}

/** A lookup keeping only the addresses a webhook may connect to; none left: an error. */
function allowedLookup(resolve: typeof dns.lookup, refused: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) {
        callback(err, '');
        return;
      }
      const allowed = addresses.filter((a) => !refused(a.address));
      const first = allowed[0];
      if (first === undefined) {
        const error: NodeJS.ErrnoException = new Error(
          `refused: ${hostname} resolves to a private address (${addresses.map((a) => a.address).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=true to allow it`,
        );
        error.code = 'EWEBHOOKPRIVATE';
        callback(error, '');
        return;
      }
      if (options.all === true) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}
