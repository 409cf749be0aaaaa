// Loaded into a benchmarked service with --import: on SIGUSR2 it writes the process's own view of
// its memory (process.memoryUsage(), V8's heap spaces) to MEMORY_PROBE_FILE, so the benchmark can
// say what the resident memory is. Nothing of the service imports it.
import fs from 'node:fs';
import v8 from 'node:v8';

const file = process.env.MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    fs.writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), spaces, codeStats: v8.getHeapCodeStatistics() }));
  });
}
