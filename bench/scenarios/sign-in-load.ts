// Issue 32: password sign-ins beside the hot reads. C5 read under the scenario's load, alone and
// with a fixed rate of password sign-ins (POST /api/session with the right password: Argon2id on
// libuv's thread pool, about 30 ms of a core each, plus the throttle, the session and the audit
// entry), in alternating rounds (alone, with; then with, alone; ...) so that the machine's other
// load weighs on both alike. The goal: C5's p99 with 20 sign-ins a second within 10% of its p99
// alone. The service's event loop delay in each phase (bench/harness/memory-probe.ts) tells work
// that blocks the loop (its delay would reach a hash's ~30 ms) from work that only takes a core.
import type { Options, Result } from 'autocannon';
import { measureCpu } from '../harness/cpu.ts';
import { readProbe, type Probe } from '../harness/footprint.ts';
import type { BenchPerson } from '../harness/people.ts';
import type { Server } from '../harness/server.ts';
import { scenarios, type ScenarioInput } from './scenarios.ts';

export const SIGN_IN_GOAL = { rate: 20, p99Ratio: 1.1 } as const;

export interface Phase {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU ms per C5 request, the sign-ins' included when they ran. */
  serverCpuMs: number;
  databaseCpuMs: number;
  /** The service's event loop delay during the phase (null: no probe in the service). */
  eventLoopDelayMs: Probe['eventLoopDelayMs'] | null;
}

export interface SignIns {
  asked: number;
  succeeded: number;
  /** Refused or failed sign-ins by status ('error': no answer). */
  failed: Record<string, number>;
  perSecond: number;
  p50: number;
  p99: number;
}

export interface SignInLoadResult {
  /** Sign-ins a second asked for. */
  rate: number;
  /** C5's own rate (autocannon's overallRate), or null: as many as its connections can make. */
  c5Rate: number | null;
  seconds: number;
  connections: number;
  alone: Phase[];
  withSignIns: Phase[];
  signIns: SignIns;
  /** Medians of the rounds. */
  p99Alone: number;
  p99WithSignIns: number;
  /** p99 with sign-ins / p99 alone. */
  p99Ratio: number;
  met: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const percentile = (sorted: number[], p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0) * 10) / 10;

let turn = 0;

/**
 * Password sign-ins at a fixed rate for `seconds` (open loop: each starts on time whatever the
 * others do), the people taking turns. Refusals are counted by status.
 */
export async function signInsAtRate(
  url: string,
  people: readonly BenchPerson[],
  rate: number,
  seconds: number,
): Promise<{ latencies: number[]; failed: Record<string, number>; asked: number }> {
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  let asked = 0;
  const pending = new Set<Promise<void>>();
  const one = async (person: BenchPerson) => {
    const started = performance.now();
    let status = 'error';
    try {
      const body = JSON.stringify({ email: person.email, password: person.password });
      const res = await fetch(`${url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      status = String(res.status);
    } catch {
      // counted as an error below
    }
    if (status === '200') latencies.push(performance.now() - started);
    else failed[status] = (failed[status] ?? 0) + 1;
  };
  const start = performance.now();
  const end = start + seconds * 1000;
  for (let now = start; now < end; now = performance.now()) {
    const due = Math.floor(((now - start) / 1000) * rate) + 1; // the first at once
    for (; asked < due; asked++) {
      const p = one(people[turn++ % people.length] as BenchPerson);
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    await new Promise((r) => setTimeout(r, Math.max(1, start + (asked / rate) * 1000 - performance.now())));
  }
  await Promise.all(pending);
  return { latencies, failed, asked };
}

export interface SignInLoadContext {
  server: Server;
  /** Where the benchmark reads the database (its backends' CPU). */
  readUrl: string;
  input: ScenarioInput;
  /** The service's probe file (bench/harness/memory-probe.ts), or null when it runs without it. */
  probeFile: string | null;
  load: (url: string, opts: Partial<Options>) => Promise<Result>;
  seconds: number;
  connections: number;
  rounds: number;
  rate?: number;
  /** C5 at this many requests a second instead of as fast as its connections go. */
  c5Rate?: number | null;
}

export async function measureSignInLoad(ctx: SignInLoadContext): Promise<SignInLoadResult> {
  const c5 = scenarios.find((s) => s.name === 'C5 read');
  if (c5 === undefined) throw new Error('no C5 read scenario');
  const rate = ctx.rate ?? SIGN_IN_GOAL.rate;
  const c5Rate = ctx.c5Rate ?? null;
  const alone: Phase[] = [];
  const withSignIns: Phase[] = [];
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  let asked = 0;
  const phase = async (signing: boolean): Promise<Phase> => {
    if (ctx.probeFile) await readProbe(ctx.server, ctx.probeFile); // starts the probe's count afresh
    const opts = { ...c5.options(ctx.input), ...(c5Rate === null ? {} : { overallRate: c5Rate }) };
    const { loaded, cpu } = await measureCpu(ctx.server.pid, ctx.readUrl, async () => {
      const [result, signed] = await Promise.all([
        ctx.load(ctx.input.url, opts),
        signing ? signInsAtRate(ctx.input.url, ctx.input.world.signInPeople, rate, ctx.seconds) : null,
      ]);
      if (signed) {
        latencies.push(...signed.latencies);
        for (const [status, n] of Object.entries(signed.failed)) failed[status] = (failed[status] ?? 0) + n;
        asked += signed.asked;
      }
      return result;
    });
    const probe = ctx.probeFile ? await readProbe(ctx.server, ctx.probeFile) : null;
    return {
      rps: Math.round(loaded.requests.average),
      p50: loaded.latency.p50,
      p99: loaded.latency.p99,
      errors: loaded.errors + loaded.timeouts + loaded.non2xx,
      serverCpuMs: cpu.server,
      databaseCpuMs: cpu.database,
      eventLoopDelayMs: probe?.eventLoopDelayMs ?? null,
    };
  };
  for (let i = 0; i < ctx.rounds; i++) {
    if (i % 2 === 0) {
      alone.push(await phase(false));
      withSignIns.push(await phase(true));
    } else {
      withSignIns.push(await phase(true));
      alone.push(await phase(false));
    }
  }
  latencies.sort((a, b) => a - b);
  const p99Alone = median(alone.map((p) => p.p99));
  const p99WithSignIns = median(withSignIns.map((p) => p.p99));
  const p99Ratio = p99Alone > 0 ? Math.round((p99WithSignIns / p99Alone) * 1000) / 1000 : 0;
  return {
    rate,
    c5Rate,
    seconds: ctx.seconds,
    connections: ctx.connections,
    alone,
    withSignIns,
    signIns: {
      asked,
      succeeded: latencies.length,
      failed,
      perSecond: Math.round((latencies.length / (ctx.seconds * ctx.rounds)) * 10) / 10,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    },
    p99Alone,
    p99WithSignIns,
    p99Ratio,
    met: p99Ratio > 0 && p99Ratio <= SIGN_IN_GOAL.p99Ratio,
  };
}

/** The failed sign-ins by status, or 0. */
export const failures = (s: SignIns) =>
  Object.entries(s.failed)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ') || '0';

/** One line for the log. */
export function describeSignInLoad(r: SignInLoadResult): string {
  const loop = (ps: Phase[]) => {
    const d = ps.map((p) => p.eventLoopDelayMs).filter((x) => x !== null);
    return d.length === 0 ? '' : `, event loop delay p99 ${Math.round(median(d.map((x) => x.p99)) * 10) / 10} ms (max ${Math.max(...d.map((x) => x.max))})`;
  };
  return (
    `C5 ${r.c5Rate === null ? `at ${r.connections} connections` : `at ${r.c5Rate} req/s`}: p99 alone ${r.p99Alone} ms (rounds ${r.alone.map((p) => p.p99).join(', ')}; ` +
    `${Math.round(median(r.alone.map((p) => p.rps)))} req/s${loop(r.alone)}), with ${r.rate} sign-ins/s ${r.p99WithSignIns} ms (rounds ${r.withSignIns.map((p) => p.p99).join(', ')}; ` +
    `${Math.round(median(r.withSignIns.map((p) => p.rps)))} req/s${loop(r.withSignIns)}): ratio ${r.p99Ratio} (goal ≤ ${SIGN_IN_GOAL.p99Ratio}, ${r.met ? 'met' : 'not met'}); ` +
    `sign-ins ${r.signIns.succeeded} of ${r.signIns.asked} (${r.signIns.perSecond}/s, failed ${failures(r.signIns)}), p50 ${r.signIns.p50} ms, p99 ${r.signIns.p99} ms`
  );
}
