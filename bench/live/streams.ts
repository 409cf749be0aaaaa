// The streams half of bench/live/live.ts: `clients` Server-Sent Events clients on one instance, three in
// four on C8 (a location's requests, spread over a few locations) and one in four on C6 (one
// request's status each), then `rate` changes a second through the API (claim, on the way,
// complete of the tracked requests). Each change is heard by its request's C6 client and by every
// C8 client of its location; fan-out is the time from sending the change to each client's event.
import http from 'node:http';
import { percentile, round, sleep } from './stats.ts';

export interface StreamsOptions {
  base: string;
  token: string;
  locations: number[];
  optionByLocation: Map<number, number>;
  clients: number;
  rate: number;
  seconds: number;
  log: (line: string) => void;
}

export interface StreamsFigures {
  clients: number;
  c6: number;
  c8: number;
  locations: number;
  opened: number;
  open_ms: number;
  changes: number;
  expected: number;
  received: number;
  /** The changes' own HTTP answers (the fan-out includes them). */
  change_answer_ms: { p50: number; p99: number };
  fanout_ms: { p50: number; p99: number; max: number };
  /** Failed opens and changes, and events that never arrived. */
  errors: number;
  missing: number;
  error_samples: string[];
}

interface Client {
  close(): void;
}

/** One SSE client on its own connection, from a loopback address of its own group (an instance
 * takes at most 500 streams per client address). */
export function openStream(
  base: string,
  path: string,
  n: number,
  headers: Record<string, string>,
  onEvent: (event: string, data: string) => void,
  /** Clients sharing one source address, and the loopback network (127.net.0.0/16) they come from:
   * the service bounds streams per client address (500 with a credential, 50 with only a
   * message_id), so the bench spreads them over loopback addresses. */
  spread = { perAddress: 400, net: 0 },
): Promise<Client> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: { accept: 'text/event-stream', ...headers },
      localAddress: `127.${spread.net}.${Math.floor(n / spread.perAddress / 250)}.${2 + (Math.floor(n / spread.perAddress) % 250)}`,
      agent: false,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`stream ${path}: ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let buffered = '';
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 2);
          let event = '';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (event !== '') onEvent(event, data);
        }
      });
      res.on('error', () => {});
      resolve({ close: () => req.destroy() });
    });
    req.end();
  });
}

export async function post(base: string, token: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Runs `fn` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}

const STEPS = ['claim', 'on_the_way', 'complete'] as const;
const STATUS_OF = { claim: 'claimed', on_the_way: 'on_the_way', complete: 'completed' } as const;
const employee = { channel_id: 'C-floor', claimed_by: 'Bench Staff', claimed_by_user_id: 'U-bench' };

export async function runStreams(o: StreamsOptions): Promise<StreamsFigures> {
  const c6 = Math.floor(o.clients / 4);
  const c8 = o.clients - c6;
  const errors: string[] = [];
  const fail = (what: string) => {
    if (errors.length < 1000) errors.push(what);
  };

  // The requests the C6 clients track, spread over the locations.
  const tracked: { messageId: string; locationId: number }[] = [];
  await inParallel(
    Array.from({ length: c6 }, (_, i) => o.locations[i % o.locations.length] as number),
    8,
    async (locationId) => {
      const record = await post(o.base, o.token, '/api/callforhelp/requests', { location_id: locationId, option_id: o.optionByLocation.get(locationId) });
      tracked.push({ messageId: String(record.message_id), locationId });
    },
  );

  // key "message_id status" -> when the change was sent; arrivals per key.
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  const heard = (key: string) => {
    const t0 = sentAt.get(key);
    if (t0 === undefined) return; // the first status of a C6 stream, or a request's creation
    received++;
    latencies.push(performance.now() - t0);
  };
  const c8ByLocation = new Map<number, number>();
  const clients: Client[] = [];
  const started = performance.now();
  const specs = [
    ...Array.from({ length: c8 }, (_, i) => ({ kind: 'c8' as const, locationId: o.locations[i % o.locations.length] as number, messageId: '' })),
    ...tracked.map((r) => ({ kind: 'c6' as const, ...r })),
  ];
  await inParallel(specs, 50, async (spec, n) => {
    try {
      if (spec.kind === 'c8') {
        clients.push(
          await openStream(
            o.base,
            `/api/callforhelp/requests/stream?location_id=${spec.locationId}`,
            n,
            { authorization: `Bearer ${o.token}` },
            (event, data) => {
              if (event !== 'request') return;
              const r = JSON.parse(data) as { message_id: string; status: string };
              heard(`${r.message_id} ${r.status}`);
            },
          ),
        );
        c8ByLocation.set(spec.locationId, (c8ByLocation.get(spec.locationId) ?? 0) + 1);
      } else {
        clients.push(
          await openStream(
            o.base,
            `/api/callforhelp/v1/tracking/stream?message_id=${spec.messageId}`,
            n,
            {},
            (event, data) => {
              if (event !== 'status') return;
              const r = JSON.parse(data) as { message_id: string; cfh_request: { status: string } };
              heard(`${r.message_id} ${r.cfh_request.status}`);
            },
            { perAddress: 40, net: 1 },
          ),
        );
      }
    } catch (err) {
      fail(`open: ${String((err as Error).message)}`);
    }
  });
  const openMs = performance.now() - started;
  o.log(`streams: ${clients.length} of ${o.clients} open in ${Math.round(openMs)} ms; ${o.rate} changes/s for ${o.seconds} s`);
  await sleep(500);

  // The changes: each tracked request claimed, then on the way, then completed, round robin.
  let expected = 0;
  let changes = 0;
  const total = Math.round(o.rate * o.seconds);
  const pending: Promise<void>[] = [];
  const answered: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total && tracked.length > 0; i++) {
    const wait = t0 + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await sleep(wait);
    const request = tracked[i % tracked.length] as (typeof tracked)[number];
    const step = STEPS[Math.floor(i / tracked.length)];
    if (step === undefined) break;
    const sent = performance.now();
    sentAt.set(`${request.messageId} ${STATUS_OF[step]}`, sent);
    expected += 1 + (c8ByLocation.get(request.locationId) ?? 0);
    changes++;
    pending.push(
      post(o.base, o.token, `/api/callforhelp/${step}`, {
        message_id: request.messageId,
        ...(step === 'complete' ? { customer_status: 'helped' } : {}),
        ...employee,
      }).then(
        (r) => {
          answered.push(performance.now() - sent);
          if (r.success !== true) fail(`${step}: ${JSON.stringify(r).slice(0, 200)}`);
        },
        (err: unknown) => fail(String((err as Error).message)),
      ),
    );
  }
  await Promise.all(pending);
  // What is still on its way arrives within a few seconds, or counts as missing.
  const drainUntil = performance.now() + 5_000;
  while (received < expected && performance.now() < drainUntil) await sleep(100);
  for (const c of clients) c.close();
  const missing = Math.max(0, expected - received);
  latencies.sort((a, b) => a - b);
  answered.sort((a, b) => a - b);
  return {
    clients: o.clients,
    c6,
    c8,
    locations: o.locations.length,
    opened: clients.length,
    open_ms: Math.round(openMs),
    changes,
    expected,
    received,
    change_answer_ms: { p50: round(percentile(answered, 50)), p99: round(percentile(answered, 99)) },
    fanout_ms: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? 0) },
    errors: errors.length + missing,
    missing,
    error_samples: errors.slice(0, 5),
  };
}
