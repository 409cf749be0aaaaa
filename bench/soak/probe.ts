// Bench-only memory probe, loaded into each soak instance with `node --import bench/soak/probe.ts`
// (NODE_OPTIONS): every SOAK_PROBE_MS (default 5 s) it writes the process's own view of its memory to
// SOAK_PROBE_FILE, which the soak reads with each sample. RSS alone cannot tell a JavaScript leak
// from native memory (malloc arenas of threads, WebAssembly, child processes' pipes): heapUsed and
// the heap spaces say what the collector keeps alive, external and arrayBuffers what Buffers hold,
// and /proc's smaps_rollup splits RSS into anonymous and file-backed pages. Nothing in src/ knows.
import fs from 'node:fs';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env.SOAK_PROBE_FILE;
const every = Number(process.env.SOAK_PROBE_MS ?? 5_000);
const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;

function rollup(): Record<string, number> {
  try {
    const text = fs.readFileSync('/proc/self/smaps_rollup', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { anonMb: mb(kb('Anonymous') * 1024), fileMb: mb((kb('Rss') - kb('Anonymous')) * 1024) };
  } catch {
    return {};
  }
}

function threads(): number {
  try {
    return fs.readdirSync('/proc/self/task').length;
  } catch {
    return 0;
  }
}

function write(): void {
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name.replace(/_space$/, ''), mb(s.space_used_size)]));
  const sample = {
    at: Date.now(),
    rssMb: mb(m.rss),
    heapTotalMb: mb(m.heapTotal),
    heapUsedMb: mb(m.heapUsed),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
    ...rollup(),
    threads: threads(),
    handles: (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.().length ?? 0,
    spaces,
  };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(sample));
  fs.renameSync(`${file}.tmp`, file as string);
}

// --import runs in worker threads too (the speech workers): only the main thread reports.
if (isMainThread && file !== undefined && file !== '') {
  setInterval(write, every).unref();
  write();
}
