// The webhooks half of bench/live/live.ts: `rate` events a second for `seconds`, written to the event log
// as another instance would (an INSERT of the events and the `events` NOTIFY, so the service's CPU
// goes to delivering them), spread over the stores of the organization. Two organization-wide
// endpoints take them: a local receiver that checks each signature and answers 200 at once, and a
// dead one (`refused`: nothing listens; `hang`: connections accepted, never answered; `500`).
// Lag is the receiver's clock at arrival minus the event's created_at (one machine, one clock).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.ts';
import { percentile, round, sleep } from './stats.ts';

export const BENCH_MESSAGE = 'bench live event';
/** The benchmark's own connections: the database CPU counted is that of the others, the service's. */
export const BENCH_APPLICATION = 'bench-live';

export interface Receiver {
  url: string;
  secret: string;
  /** uuid -> lag in ms at the first arrival. */
  readonly lags: Map<string, number>;
  /** [arrival (ms since the epoch), lag in ms] of each first arrival. */
  readonly arrivals: [number, number][];
  duplicates: number;
  badSignatures: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const secret = crypto.randomBytes(24).toString('hex');
  const lags = new Map<string, number>();
  const receiver = { secret, lags, arrivals: [], duplicates: 0, badSignatures: 0 } as unknown as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      const raw = Buffer.concat(chunks);
      const ts = String(req.headers['x-timestamp'] ?? '');
      const expected = crypto.createHmac('sha256', secret).update(ts).update(raw).digest('hex');
      if (expected !== req.headers['x-signature']) {
        receiver.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      res.writeHead(204).end();
      const event = JSON.parse(raw.toString('utf8')) as { uuid: string; created_at: string; message: string };
      if (event.message !== BENCH_MESSAGE) return;
      if (lags.has(event.uuid)) receiver.duplicates++;
      else {
        lags.set(event.uuid, arrived - Date.parse(event.created_at));
        receiver.arrivals.push([arrived, arrived - Date.parse(event.created_at)]);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

export type DeadKind = 'refused' | 'hang' | '500';

/** An endpoint that never takes a delivery. */
export async function startDead(kind: DeadKind): Promise<{ url: string; close(): Promise<void> }> {
  if (kind === 'refused') return { url: `http://127.0.0.1:${await freePort()}/hook`, close: async () => {} };
  const server = http.createServer((req, res) => {
    req.resume();
    if (kind === '500') req.on('end', () => res.writeHead(500).end('down'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface WebhooksOptions {
  databaseUrl: string;
  receiver: Receiver;
  organizationId: number;
  locations: number[];
  rate: number;
  seconds: number;
  /** Time after the last event is written for the rest to arrive. */
  drainSeconds: number;
  deadKind: DeadKind;
  deadEndpointId: number;
  liveEndpointId: number;
  log: (line: string) => void;
}

/**
 * Samples how far the cluster's oldest running transaction (its snapshot's xmin) trails: the
 * event log's durable subscribers, the webhooks' fan-out among them, read only what committed
 * before it, so this lag is a floor under every delivery's. Returns a stop that gives the lags.
 */
async function sampleXminLag(databaseUrl: string): Promise<() => Promise<number[]>> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: BENCH_APPLICATION });
  await client.connect();
  const seen: [number, number][] = [];
  const lags: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const {
        rows: [r],
      } = await client.query<{ xmin: string; xmax: string }>(
        'SELECT pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax FROM pg_current_snapshot() AS s',
      );
      const now = performance.now();
      seen.push([now, Number(r?.xmax)]);
      const at = seen.find(([, xmax]) => xmax >= Number(r?.xmin));
      if (at !== undefined && seen[0] !== at) lags.push(now - at[0]);
      await sleep(50);
    }
  })();
  return async () => {
    running = false;
    await loop;
    await client.end();
    return lags.sort((a, b) => a - b);
  };
}

function lagBySecond(arrivals: readonly [number, number][], startedAt: number): number[] {
  const seconds: number[][] = [];
  for (const [at, lag] of arrivals) (seconds[Math.max(0, Math.floor((at - startedAt) / 1000))] ??= []).push(lag);
  return Array.from(seconds, (s) =>
    s === undefined
      ? 0
      : Math.round(
          percentile(
            s.sort((a, b) => a - b),
            99,
          ),
        ),
  );
}

export async function runWebhooks(o: WebhooksOptions) {
  const client = new pg.Client({ connectionString: o.databaseUrl, application_name: BENCH_APPLICATION });
  await client.connect();
  const stopSampling = await sampleXminLag(o.databaseUrl);
  let offered = 0;
  const t0 = performance.now();
  const startedAt = Date.now();
  const tickMs = 20;
  try {
    while (performance.now() - t0 < o.seconds * 1000) {
      const due = Math.floor(((performance.now() - t0) / 1000) * o.rate) - offered;
      if (due > 0) {
        const locations = Array.from({ length: due }, (_, i) => o.locations[(offered + i) % o.locations.length] as number);
        await client.query(
          `WITH ins AS (
             INSERT INTO events (type, status, organization_id, location_id, internal_id, details, message, created_at)
             SELECT 'callforhelp', 'created', $1, loc, n::text, jsonb_build_object('type', 'api', 'message_id', n::text), $3, clock_timestamp()
             FROM unnest($2::int[]) WITH ORDINALITY AS u(loc, n)
             RETURNING 1
           )
           SELECT pg_notify('storeops_commits', 'public:bench-live:events'), (SELECT count(*) FROM ins)`,
          [o.organizationId, locations, BENCH_MESSAGE],
        );
        offered += due;
      }
      await sleep(tickMs);
    }
    const offeredSeconds = (performance.now() - t0) / 1000;
    o.log(`webhooks: ${offered} events written in ${offeredSeconds.toFixed(1)} s; draining up to ${o.drainSeconds} s`);
    const drainUntil = performance.now() + o.drainSeconds * 1000;
    while (o.receiver.lags.size < offered && performance.now() < drainUntil) await sleep(100);
    const windowEnd = Date.now();
    const xminLags = await stopSampling();
    const [counts] = (
      await client.query<{
        dead_attempts: number;
        dead_pending: number;
        live_attempts: number;
        live_pending: number;
        post_p50: number;
        post_p99: number;
        fanout_p50: number;
        fanout_p99: number;
      }>(
        `SELECT
         (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at) * 1000) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = $2 AND e.message = $3) AS fanout_p50,
         (SELECT percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at) * 1000) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = $2 AND e.message = $3) AS fanout_p99,
         (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $2) AS post_p50,
         (SELECT percentile_disc(0.99) WITHIN GROUP (ORDER BY a.duration_ms) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $2) AS post_p99,
         (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1) AS dead_attempts,
         (SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending') AS dead_pending,
         (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $2) AS live_attempts,
         (SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = $2 AND state = 'pending') AS live_pending`,
        [o.deadEndpointId, o.liveEndpointId, BENCH_MESSAGE],
      )
    ).rows;
    const liveErrors = (
      await client.query<{ error: string; n: number }>(
        `SELECT coalesce(a.error, 'status ' || a.status_code) AS error, count(*)::int AS n
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE d.endpoint_id = $1 AND NOT (a.error IS NULL AND a.status_code BETWEEN 200 AND 299)
       GROUP BY 1 ORDER BY 2 DESC LIMIT 3`,
        [o.liveEndpointId],
      )
    ).rows;
    // Events that never arrived count with the age they had when the window closed: a lower bound.
    const [oldest] = (
      await client.query<{ ages: number[] }>(
        `SELECT coalesce(array_agg(extract(epoch FROM (to_timestamp($2::double precision / 1000) - e.created_at)) * 1000), '{}') AS ages
       FROM events e WHERE e.message = $1 AND NOT (e.uuid::text = ANY ($3::text[]))`,
        [BENCH_MESSAGE, windowEnd, [...o.receiver.lags.keys()]],
      )
    ).rows;
    const lags = [...o.receiver.lags.values(), ...(oldest?.ages ?? []).map(Number)].sort((a, b) => a - b);
    const delivered = o.receiver.lags.size;
    return {
      stores: o.locations.length,
      seconds: o.seconds,
      offered,
      offered_per_s: round(offered / offeredSeconds),
      delivered_in_window: delivered,
      window_s: round(offeredSeconds + o.drainSeconds),
      delivered_per_s: round(delivered / offeredSeconds),
      delivered_within_1s: [...o.receiver.lags.values()].filter((l) => l < 1000).length,
      lag_ms: { p50: round(percentile(lags, 50)), p99: round(percentile(lags, 99)), max: round(lags.at(-1) ?? 0) },
      /** The lag's p99 of the events that arrived in each second of the run: when it was late. */
      lag_p99_ms_by_second: lagBySecond(o.receiver.arrivals, startedAt),
      duplicates: o.receiver.duplicates,
      bad_signatures: o.receiver.badSignatures,
      errors: offered - delivered + o.receiver.badSignatures,
      /** From the event's commit to its deliveries' being written by the event log's subscriber. */
      fanout_lag_ms: { p50: round(Number(counts?.fanout_p50 ?? 0)), p99: round(Number(counts?.fanout_p99 ?? 0)) },
      cluster_xmin_lag_ms: { p50: round(percentile(xminLags, 50)), p99: round(percentile(xminLags, 99)) },
      live_endpoint: {
        attempts: counts?.live_attempts ?? 0,
        pending: counts?.live_pending ?? 0,
        attempt_ms: { p50: counts?.post_p50 ?? 0, p99: counts?.post_p99 ?? 0 },
        failed_attempts: liveErrors,
      },
      dead_endpoint: { kind: o.deadKind, attempts: counts?.dead_attempts ?? 0, pending: counts?.dead_pending ?? 0 },
    };
  } finally {
    await client.end();
  }
}
