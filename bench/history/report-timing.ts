// Over a filled history (--history N): P1 of one store over 31 days and over a year, timed through
// the service's HTTP API. (The plans of the hot statements, which this took by running the
// service's store functions against an EXPLAINing handle, are no longer taken: the bench does not
// import the service's stores. The plans recorded in bench/JOURNAL.md were measured that way.)
import type { BenchWorld } from '../harness/world.ts';

export interface HistoryReports {
  /** P1 of one store, median and max of 5 runs after a warm-up, ms. */
  p1: Record<string, { median: number; max: number; targetMs: number }>;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

async function timeP1(url: string, token: string): Promise<{ median: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < 6; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`P1 ${url}: ${res.status} ${body}`);
    if (i > 0) ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { median: Math.round(ms[Math.floor(ms.length / 2)] as number), max: Math.round(ms.at(-1) as number) };
}

export async function historyReports(serviceUrl: string, world: BenchWorld, log: (line: string) => void): Promise<HistoryReports> {
  const location = world.locations[0] as number;
  const yesterday = new Date(Date.now() - 86_400_000);
  const ranges = { '31 days': { days: 31, targetMs: 200 }, '365 days': { days: 365, targetMs: 1000 } };
  const p1: HistoryReports['p1'] = {};
  for (const [name, r] of Object.entries(ranges)) {
    const from = day(new Date(yesterday.getTime() - (r.days - 1) * 86_400_000));
    p1[name] = {
      ...(await timeP1(`${serviceUrl}/api/reports/cfh?location_id=${location}&from=${from}&to=${day(yesterday)}`, world.token)),
      targetMs: r.targetMs,
    };
    log(`history: P1 of store ${location} over ${name}: median ${p1[name]?.median} ms, max ${p1[name]?.max} ms (target < ${r.targetMs})`);
  }
  return { p1 };
}
