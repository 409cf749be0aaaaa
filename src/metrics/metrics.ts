// The service's Prometheus metrics (contract section 16), one registry per composed service (no
// module singleton: two services in one process, as the tests build them, keep their own).
// Counters of this process (HTTP, speech, retention) are per instance; the figures that must agree
// across instances (CFH by status, outbox, webhooks, jobs, devices) are read from the database at
// each scrape (store.ts) and set as gauges.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Snapshot } from './store.ts';

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'storeops_http_requests_total',
    help: 'HTTP requests answered, by operationId (or route) and status (per instance)',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'storeops_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operationId (or route) (per instance)',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly speechSeconds = new Histogram({
    name: 'storeops_speech_synthesis_seconds',
    help: "Time to synthesize a radio announcement's speech (per instance)",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8],
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'storeops_retention_deleted_total',
    help: 'Rows deleted by retention, by kind (per instance)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly #cfh = new Gauge({
    name: 'storeops_cfh_requests',
    help: 'Call for Help requests in the database, by status',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly #deviceMessages = new Gauge({
    name: 'storeops_device_messages',
    help: 'Device outbox messages: queued (not yet published), failed (its last publish failed), unacked (published, no ack yet)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly #webhooks = new Gauge({
    name: 'storeops_webhook_deliveries',
    help: 'Webhook deliveries in the database, by state (pending, delivered, failed)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly #jobsLag = new Gauge({
    name: 'storeops_jobs_lag_seconds',
    help: 'How late the oldest due scheduled job is (0: none due)',
    registers: [this.registry],
  });

  readonly #devicesOnline = new Gauge({
    name: 'storeops_devices_connected',
    help: 'Devices currently online (device health), by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /** An answered HTTP request: `operation` is the route's operationId, its route pattern, or "unmatched". */
  observeHttp(operation: string, status: number, seconds: number): void {
    this.httpRequests.inc({ operation, status: String(status) });
    this.httpDuration.observe({ operation }, seconds);
  }

  observeSynthesis(seconds: number): void {
    this.speechSeconds.observe(seconds);
  }

  countDeleted(kind: string, rows: number): void {
    if (rows > 0) this.retentionDeleted.inc({ kind }, rows);
  }

  /** The Prometheus text of everything, with the database's figures of this scrape. */
  async render(snapshot: Snapshot): Promise<string> {
    this.#cfh.reset();
    for (const status of CFH_STATUSES) this.#cfh.set({ status }, snapshot.cfh[status] ?? 0);
    for (const state of ['queued', 'failed', 'unacked'] as const) this.#deviceMessages.set({ state }, snapshot.deviceMessages[state]);
    this.#webhooks.reset();
    for (const state of ['pending', 'delivered', 'failed']) this.#webhooks.set({ state }, snapshot.webhooks[state] ?? 0);
    this.#jobsLag.set(snapshot.jobsLagSeconds);
    this.#devicesOnline.reset();
    for (const kind of ['locker', 'edge', 'call_button']) this.#devicesOnline.set({ kind }, snapshot.devicesOnline[kind] ?? 0);
    return this.registry.metrics();
  }
}

export const CFH_STATUSES = ['created', 'claimed', 'on_the_way', 'completed', 'timed_out', 'cancelled'] as const;
