// A webhook receiver to watch store events arrive: it checks each request as a real receiver
// should (the signature, the timestamp window, duplicates by uuid; written here without the
// service's own code, as docs/webhooks.md shows it) and prints the event.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Print, Simulator } from './connection.ts';

export interface WebhookReceiverOptions {
  port: number;
  host?: string;
  /** The endpoint's secret, as provisioned. */
  secret: string;
  print?: Print;
  /** How far x-timestamp may be from this machine's clock. */
  windowSeconds?: number;
}

export interface WebhookReceiver extends Simulator {
  /** The port it listens on (useful with port 0). */
  readonly port: () => number;
}

const MAX_BODY = 1024 * 1024;
const REMEMBERED = 10_000;

/** Why a request is not a genuine, fresh delivery; null when it is. */
export function checkDelivery(secret: string, headers: http.IncomingHttpHeaders, raw: Buffer, nowSeconds: number, windowSeconds = 60): string | null {
  const timestamp = headers['x-timestamp'];
  const signature = headers['x-signature'];
  if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp) || typeof signature !== 'string') return 'no x-timestamp or x-signature';
  const expected = crypto.createHmac('sha256', secret).update(timestamp).update(raw).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'bad signature';
  if (Math.abs(nowSeconds - Number(timestamp)) > windowSeconds) return `timestamp more than ${windowSeconds} s away`;
  return null;
}

export function startWebhookReceiver(opts: WebhookReceiverOptions): WebhookReceiver {
  const print: Print = opts.print ?? ((line) => console.log(`[webhooks] ${line}`));
  const seen = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const refused = checkDelivery(opts.secret, req.headers, raw, Date.now() / 1000, opts.windowSeconds ?? 60);
      if (refused !== null) {
        print(`refused a request: ${refused}`);
        res.writeHead(401).end();
        return;
      }
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const uuid = String(event.uuid);
      // Answered 2xx all the same: the service sends again until it hears one.
      res.writeHead(204).end();
      if (seen.has(uuid)) {
        print(`(again: ${uuid}, already handled)`);
        return;
      }
      if (seen.size >= REMEMBERED) seen.delete(seen.values().next().value as string);
      seen.add(uuid);
      const store = event.store_number ?? event.internal_location_id;
      print(`${String(event.created_at)} ${String(event.type)} ${String(event.status)} (store ${String(store)}): ${String(event.message)}`);
      print(`  ${JSON.stringify(event.details)}`);
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      const address = server.address() as AddressInfo;
      print(`listening on http://${address.address}:${address.port}/ (checks signatures and the 60 s window, drops repeats)`);
      resolve();
    });
  });
  return {
    ready,
    port: () => (server.address() as AddressInfo | null)?.port ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
