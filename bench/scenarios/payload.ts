// The same-payload ceiling of a read scenario: its real responses, captured from the running
// service, served by a bare Fastify server in its own process (bench/scenarios/payload-server.ts), loaded
// with the scenario's own requests and autocannon settings. What the stack costs for these bytes.
import fs from 'node:fs';
import path from 'node:path';
import type { Options, Result } from 'autocannon';
import type { Scenario, ScenarioInput } from './scenarios.ts';
import { startServer } from '../harness/server.ts';

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** Every response the scenario may get, keyed by its path: content type and body as sent. */
export async function capturePayloads(scenario: Scenario, input: ScenarioInput): Promise<Record<string, { type: string; body: string }>> {
  const reads = scenario.reads?.(input) ?? [];
  const out: Record<string, { type: string; body: string }> = {};
  await pool(reads, 8, async ({ path: p, headers }) => {
    const res = await fetch(`${input.url}${p}`, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`capturing ${scenario.name}: ${p} answered ${res.status} ${body}`);
    out[p] = { type: res.headers.get('content-type') ?? 'application/json', body };
  });
  return out;
}

export interface PayloadCeiling {
  rps: number;
  p50: number;
  p99: number;
  /** Mean response body, bytes. */
  bodyBytes: number;
}

/** Serves the captured responses from a bare Fastify process and loads it as the scenario loads the service. */
export async function payloadCeiling(
  root: string,
  dir: string,
  scenario: Scenario,
  input: ScenarioInput,
  load: (url: string, opts: Partial<Options>) => Promise<Result>,
): Promise<PayloadCeiling> {
  const captured = await capturePayloads(scenario, input);
  const file = path.join(dir, `payload-${scenario.name.replace(/\W+/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(captured));
  const bodies = Object.values(captured);
  const server = await startServer(root, ['bench/scenarios/payload-server.ts'], { PAYLOAD_FILE: file });
  try {
    const result = await load(server.url, scenario.options({ ...input, url: server.url }));
    if (result.non2xx + result.errors > 0)
      throw new Error(`the same-payload server of ${scenario.name} answered ${result.non2xx} non-2xx, ${result.errors} errors`);
    return {
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      bodyBytes: Math.round(bodies.reduce((n, b) => n + Buffer.byteLength(b.body), 0) / Math.max(1, bodies.length)),
    };
  } finally {
    await server.stop();
  }
}
