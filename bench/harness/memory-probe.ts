// Loaded into a benchmarked service with --import: on SIGUSR2 it writes the process's own view of
// its memory (process.memoryUsage(), V8's heap spaces) to MEMORY_PROBE_FILE, so the benchmark can
// say what the resident memory is, and how late its event loop ran since the signal before
// (perf_hooks' event loop delay, sampled every 10 ms by a libuv timer), so the benchmark can tell
// work that blocks the loop from work that only competes for the cores. Nothing of the service
// imports it.
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';

const file = process.env.MEMORY_PROBE_FILE;
if (file) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const ms = (ns: number) => Math.round(ns / 10_000) / 100;
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    const eventLoopDelayMs = { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max), samples: loop.count };
    loop.reset();
    fs.writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), spaces, codeStats: v8.getHeapCodeStatistics(), eventLoopDelayMs }));
  });
}
