// The benchmark's section of bench/RESULTS.md: from the top of the file to the line before
// `## Radio speech`; the sections after it (radio speech, soak) are other benchmarks' and kept.
import fs from 'node:fs';
import os from 'node:os';
import type { BackendResult, Settings } from './backend.ts';

const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)}%`);

export interface HelloCeiling {
  rps: number;
  p50: number;
  p99: number;
  serverCpuMs: number;
}

export function markdown(settings: Settings, quick: boolean, hello: HelloCeiling, backends: BackendResult[], extra: string[]): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `${settings.connections} connections, ${settings.duration} s per scenario${quick ? ' (--quick)' : ''}. Service logging at warn. ` +
      `Load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} (a shared machine).`,
    '',
    `Hello-world (bare Fastify, 12 bytes): **${hello.rps} req/s**, p50 ${hello.p50} ms, p99 ${hello.p99} ms, ${hello.serverCpuMs} ms of server CPU per request.`,
    '',
    'Ceilings of each read: *same payload*, a bare Fastify server answering the bytes the service answered (captured ' +
      'from it, the same requests and autocannon settings); *statements alone*, the scenario\'s own SQL through the service\'s ' +
      'database handle (pool of 10, prepared), as many in flight as connections, no HTTP. *of lower* is the ratio to the lower of the two. ' +
      'CPU ms/req: processor time per request of the service and of its own database\'s PostgreSQL backends (from /proc; other databases\' are not counted); the load generator shares the cores. ' +
      'On PostgreSQL the database is vacuumed (VACUUM ANALYZE) before each scenario, as autovacuum would have (it is off on this machine).',
    '',
  ];
  for (const b of backends) {
    const db = b.scenarios.some((s) => s.databaseCpuMs > 0);
    lines.push(`## ${b.backend} (idle RSS ${b.idle.rssMb} MB, peak ${b.peakRssMb} MB)`, '',
      `| scenario | req/s | cycles/s | p50 ms | p99 ms | errors | of hello-world | same payload req/s | statements alone req/s | of lower | service CPU ms/req |${db ? ' database CPU ms/req |' : ''} RSS after, MB |`,
      `|---|---|---|---|---|---|---|---|---|---|---|${db ? '---|' : ''}---|`);
    for (const s of b.scenarios) {
      lines.push(`| ${s.name} | ${s.rps} | ${s.cyclesPerSecond} | ${s.p50} | ${s.p99} | ${s.errors} | ${pct(s.ratioToHelloWorld)} | ${s.payloadCeilingRps ?? '–'} | ${s.databaseCeilingRps ?? '–'} | ${pct(s.ratioToLowerCeiling)} | ${s.serverCpuMs} |${db ? ` ${s.databaseCpuMs} |` : ''} ${s.rssMb} |`);
    }
    lines.push(`| R1 synthesis to a connected edge device (2 callers) | ${b.radio.rps} | | ${b.radio.deviceP50} | p95 ${b.radio.deviceP95} | ${b.radio.errors} | | | | | |${db ? ' |' : ''} ${b.radio.rssMb} |`, '');
    const f = b.idle;
    lines.push(`Idle, 8 s after start: RSS ${f.rssMb} MB = mapped files (node's binary and libraries) ${f.fileMb} + anonymous ${f.anonymousMb}: ` +
      `V8 heap ${f.heapTotalMb} (${f.heapUsedMb} used, of which code and bytecode ${f.codeMb}), buffers and wasm memory outside the heap ${f.externalMb}, other native (allocator, libuv, threads) ${f.nativeMb < 0 ? '– (part of the heap and of the wasm memory is reserved, not resident)' : f.nativeMb}.`, '');
    if (!db) lines.push('Embedded: the database runs inside the service process, so its CPU is in the service column, and there is no statements-alone ceiling.', '');
    if (b.history) {
      const h = b.history;
      lines.push(`### ${b.backend} with history: ${h.rows.toLocaleString('en')} picked-up orders and ${h.rows.toLocaleString('en')} completed CFH requests (\`--history ${h.rows}\`)`, '',
        `Filled in SQL: ${Object.entries(h.fillSeconds).map(([k, v]) => `${k} ${v} s`).join(', ')}.`, '',
        `A second service on a second database holds the history; each scenario ran ${h.rounds} rounds on each, alternating (bench/history-run.ts), `
          + 'so the machine\'s other load weighs on both alike. Figures are medians of the rounds; *CPU of empty* compares the service\'s and its database\'s CPU per request.', '',
        '| scenario | req/s (empty) | of empty | each round | p99 ms (empty) | errors | service CPU ms/req (empty) | database CPU ms/req (empty) | CPU of empty |', '|---|---|---|---|---|---|---|---|---|');
      for (const s of h.scenarios) {
        lines.push(`| ${s.name} | ${s.rps} (${s.empty.rps}) | ${pct(s.ratioToEmpty)} | ${s.roundRatios.map(pct).join(', ')} | ${s.p99} (${s.empty.p99}) | ${s.errors} | ${s.serverCpuMs} (${s.empty.serverCpuMs}) | ${s.databaseCpuMs} (${s.empty.databaseCpuMs}) | ${pct(s.cpuRatioToEmpty)} |`);
      }
      lines.push('', `P1 of one store through HTTP (median / max of 5): ${Object.entries(h.reports.p1).map(([k, v]) => `${k} ${v.median} / ${v.max} ms (target < ${v.targetMs})`).join('; ')}.`, '');
    }
  }
  lines.push(...extra);
  return `${lines.join('\n')}\n`;
}

/** Replaces the benchmark's own section of the file, keeping every section from `## Radio speech` on. */
export function writeSection(file: string, section: string): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const at = old.search(/^## Radio speech/m);
  fs.writeFileSync(file, at >= 0 ? `${section.trimEnd()}\n\n${old.slice(at)}` : section);
}
