// What the webhook tests share: a receiver (a local node:http server, outside the service) that
// checks signatures with its own code and can misbehave in every way the contract names, an
// endpoint provisioned for a world, and W1 / W2 as a client calls them.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import {
  closeWith,
  freshId,
  makeWorld,
  provisionToken,
  testApp,
  testConfig,
  type Teardown,
  type TestAppOptions,
  type TestContext,
  type World,
} from '../support/world.ts';

/** The receivers listen on 127.0.0.1: the service must be allowed private targets to reach them. */
export function webhookApp(opts: TestAppOptions = {}): Promise<TestContext> {
  return testApp({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }), ...opts });
}

export type Behaviour = 'ok' | 'status500' | 'hang' | 'reset' | 'redirect' | 'huge' | { delayMs: number };

export interface Delivered {
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown> & { uuid: string; type: string; status: string };
  /** The signature checked by this receiver's own code (HMAC-SHA256 of x-timestamp + body). */
  signed: boolean;
}

/** Verifies a delivery the way a receiver of the contract would, without the service's code. */
export function verifySignature(secret: string, headers: IncomingHttpHeaders, raw: string): boolean {
  const timestamp = String(headers['x-timestamp'] ?? '');
  const given = String(headers['x-signature'] ?? '');
  const expected = crypto
    .createHmac('sha256', secret)
    .update(timestamp + raw, 'utf8')
    .digest('hex');
  return /^\d+$/.test(timestamp) && given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

export class Receiver {
  readonly server: http.Server;
  readonly secret: string;
  readonly received: Delivered[] = [];
  behaviour: Behaviour;
  /** Requests that came in, answered or not. */
  requests = 0;
  /** Connections that were opened to it. */
  connections = 0;
  #waiters: (() => void)[] = [];

  private constructor(secret: string, behaviour: Behaviour) {
    this.secret = secret;
    this.behaviour = behaviour;
    this.server = http.createServer((req, res) => this.#handle(req, res));
    this.server.on('connection', () => this.connections++);
  }

  static async start(t: Teardown | undefined, behaviour: Behaviour = 'ok', secret = crypto.randomBytes(24).toString('hex')): Promise<Receiver> {
    const receiver = new Receiver(secret, behaviour);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    closeWith(t, () => receiver.close());
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `n` deliveries were received (answered or not). */
  async waitFor(n: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests < n) {
      if (Date.now() > deadline) assert.fail(`the receiver got ${this.requests} requests, not ${n}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  statuses(): string[] {
    return this.received.map((d) => d.body.status);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Delivered['body'];
      try {
        body = JSON.parse(raw) as Delivered['body'];
      } catch {
        body = { uuid: '', type: '', status: '(not JSON)' };
      }
      this.received.push({ headers: req.headers, raw, body, signed: verifySignature(this.secret, req.headers, raw) });
      this.requests++;
      for (const wake of this.#waiters.splice(0)) wake();
      this.#answer(req, res);
    });
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', () => {});
    const b = this.behaviour;
    if (b === 'ok') res.end('ok');
    else if (b === 'status500') res.writeHead(500).end('boom');
    else if (b === 'hang') return;
    else if (b === 'reset') req.socket.resetAndDestroy();
    else if (b === 'redirect') res.writeHead(302, { location: `${this.url}/elsewhere` }).end();
    else if (b === 'huge') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const more = () => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    } else setTimeout(() => res.end('ok'), b.delayMs).unref();
  }
}

/** Provisions a webhook endpoint of the organization; returns its id. */
export async function provisionEndpoint(
  db: Db,
  clock: Clock,
  e: {
    organizationId: number;
    locationId?: number | null;
    url: string;
    secret: string;
    events?: ('callforhelp' | 'locker' | 'radio' | 'device')[];
    id?: number;
  },
): Promise<number> {
  const id = e.id ?? freshId();
  await applyProvisioning(db, clock, {
    webhooks: [
      {
        id,
        organization_id: e.organizationId,
        location_id: e.locationId ?? null,
        url: e.url,
        secret: e.secret,
        ...(e.events === undefined ? {} : { events: e.events }),
      },
    ],
  });
  return id;
}

export interface DeliveryView {
  id: number;
  event_uuid: string;
  type: string;
  status: string;
  state: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: { at: string; status_code: number | null; duration_ms: number; error: string | null }[];
}

/** W1 as a client calls it. */
export function listDeliveries(app: App, token: string, endpointId: number | string, query = '') {
  return app.inject({ method: 'GET', url: `/api/webhooks/${endpointId}/deliveries${query}`, headers: { authorization: `Bearer ${token}` } });
}

/** W1 that must succeed. */
export async function deliveriesOf(app: App, token: string, endpointId: number): Promise<DeliveryView[]> {
  const res = await listDeliveries(app, token, endpointId);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<DeliveryView[]>();
}

/** W2 as a client calls it. */
export function redeliver(app: App, token: string, deliveryId: number | string) {
  return app.inject({ method: 'POST', url: `/api/webhooks/deliveries/${deliveryId}/redeliver`, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Hands the webhooks subscriber every event committed so far. On PostgreSQL a reader takes only
 * events of transactions older than every running one, and transaction ids are the cluster's: a
 * transaction of another test process can hold the newest events back for a moment.
 */
export async function fanOut(ctx: Pick<TestContext, 'db' | 'events'>): Promise<void> {
  for (let tries = 0; ; tries++) {
    await ctx.events.runPending();
    const [row] = await ctx.db.query<{ behind: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM events e, event_cursors c WHERE c.subscriber = 'webhooks' AND (e.tx_id, e.id) > (c.tx_id, c.event_id)) AS behind`,
    );
    if (row?.behind !== true) return;
    if (tries > 500) assert.fail('the webhooks subscriber did not catch up with the event log');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Fans the committed events out and attempts what is due. */
export async function deliverNow(ctx: TestContext): Promise<number> {
  await fanOut(ctx);
  return ctx.webhooks.runDue();
}

/** A world of its own with a receiver (behaving as told), its endpoint (subscribed to `events`, else
 * to all) and a token with the webhooks scope. */
export async function worldWithEndpoint(
  ctx: { db: Db; clock: Clock },
  t: Teardown | undefined,
  opts: { behaviour?: Behaviour; events?: ('callforhelp' | 'locker' | 'radio' | 'device')[] } = {},
): Promise<{ w: World; receiver: Receiver; endpointId: number; token: string }> {
  const w = await makeWorld(ctx.db, ctx.clock);
  const receiver = await Receiver.start(t, opts.behaviour);
  const endpointId = await provisionEndpoint(ctx.db, ctx.clock, {
    organizationId: w.organizationId,
    url: receiver.url,
    secret: receiver.secret,
    ...(opts.events ? { events: opts.events } : {}),
  });
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  return { w, receiver, endpointId, token };
}
