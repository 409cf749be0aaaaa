// The benchmark's section of bench/RESULTS.md: from the top of the file to the line before
// `## Radio speech`; the sections after it (radio speech, soak) are other benchmarks' and kept.
import fs from 'node:fs';
import os from 'node:os';
import type { BackendResult, Settings } from '../scenarios/backend.ts';
import { compare, GOALS, type Verdict } from './goals.ts';
import { sessionCosts, sessionsMarkdown } from './sessions.ts';

const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)}%`);
const signed = (x: number) => `${x > 0 ? '+' : ''}${x}%`;
const loads = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(', ');
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const met = (v: Verdict | null) => (v === null ? 'not measured' : v.met ? 'met' : '**not met**');

export interface HelloCeiling {
  rps: number;
  p50: number;
  p99: number;
  serverCpuMs: number;
}

/** Issue 29: the embedded PostgreSQL server against the machine's, scenario by scenario, and its memory and start goals. */
function embeddedAgainstPostgres(backends: BackendResult[]): string[] {
  const embedded = backends.find((b) => b.embedded);
  if (!embedded) return [];
  const postgres = backends.find((b) => !b.embedded) ?? null;
  const c = compare(embedded, postgres);
  const lines = [`## ${embedded.backend} against ${postgres ? "the machine's PostgreSQL" : 'its goals'} (issue 29)`, ''];
  const loadOf = (b: BackendResult) => `${b.backend} ${loads(b.loadAverage.start)} → ${loads(b.loadAverage.end)}`;
  lines.push(`Load average (1, 5, 15 min) as each part began and ended: ${backends.map(loadOf).join('; ')}.`, '');
  if (c.scenarios.length > 0) {
    lines.push(
      `Same scenarios, same settings, one after the other in this run. *gap*: the embedded figure against PostgreSQL's (req/s: −20% is a fifth fewer; p99 and CPU: +20% is a fifth more). ` +
        `The goal is req/s within ${GOALS.gapPercent}% of PostgreSQL's. CPU ms/req: the service's + its database backends' (from /proc), which the machine's other load moves less than req/s.`,
      '',
      '| scenario | embedded req/s | PostgreSQL req/s | gap | embedded p99 ms | PostgreSQL p99 ms | p99 gap | embedded CPU ms/req | PostgreSQL CPU ms/req | CPU gap | within 15% |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const s of c.scenarios) {
      const cpu = (x: typeof s.embedded) => `${x.serviceCpuMs} + ${x.databaseCpuMs}`;
      lines.push(
        `| ${s.name} | ${s.embedded.rps} | ${s.postgres.rps} | ${signed(s.rpsGapPercent)} | ${s.embedded.p99} | ${s.postgres.p99} | ${signed(s.p99GapPercent)} | ${cpu(s.embedded)} | ${cpu(s.postgres)} | ${signed(s.cpuGapPercent)} | ${s.met ? 'met' : '**not met**'} |`,
      );
    }
    lines.push('');
  }
  const idle = embedded.idle;
  const server = idle.embedded;
  const start = embedded.start;
  const external = postgres?.start ?? null;
  lines.push('| goal | measured | |', '|---|---|---|');
  if (c.scenarios.length > 0) {
    const missed = c.scenarios.filter((s) => !s.met);
    lines.push(
      `| L1, C5, order cycle, CFH cycle, L7 within ${GOALS.gapPercent}% of PostgreSQL (req/s) | ${c.scenarios.map((s) => `${s.name.split(' (')[0]} ${signed(s.rpsGapPercent)}`).join(', ')} | ${missed.length === 0 ? 'met' : `**not met** (${missed.map((s) => s.name.split(' (')[0]).join(', ')})`} |`,
    );
  }
  lines.push(
    `| idle PSS, service + embedded server < ${GOALS.idlePssMb} MB | ${idle.totalPssMb} MB = service ${idle.pssMb} + server ${server?.pssMb ?? '?'} in ${server?.processes.length ?? '?'} processes | ${met(c.idlePssMb)} |`,
  );
  lines.push(
    `| first start (initdb included) < ${GOALS.firstStartMs / 1000} s | ${start ? `${seconds(start.firstMs)} (median; ${start.first.map(seconds).join(', ')}); processor time ${seconds(start.firstCpuMs)}` : '–'} | ${met(c.firstStartMs)} |`,
  );
  lines.push(
    `| later start < ${GOALS.laterStartMs / 1000} s | ${start ? `${seconds(start.laterMs)} (median; ${start.later.map(seconds).join(', ')}); processor time ${seconds(start.laterCpuMs)}` : '–'} | ${met(c.laterStartMs)} |`,
  );
  if (postgres) {
    lines.push(
      `| for comparison: external PostgreSQL, idle PSS of the service alone; start (first on an empty database, migrations included; later) | ${postgres.idle.totalPssMb} MB; ${external ? `${seconds(external.firstMs)}, ${seconds(external.laterMs)} (the service's processor time ${seconds(external.firstCpuMs)}, ${seconds(external.laterCpuMs)})` : '–'} | |`,
    );
  }
  lines.push(
    '',
    'Start: from spawning `node src/main.ts` (`npm start`\'s Node flags, no PROVISION_FILE) to Fastify\'s "Server listening" (LOG_LEVEL=info), each round on a new DATA_DIR: ' +
      'the first start on it, a clean stop (SIGTERM), then the later start. *Processor time*: user + system time by then of the service (with the programs it ran and waited for: initdb) ' +
      "and of the embedded server's processes; on a busy 2-core machine the wall time is mostly waiting for a core. Idle: 8 s after the benchmark's service started (provisioned, before seeding); PSS from /proc/PID/smaps_rollup " +
      "of the service and of the embedded server's postmaster (DATA_DIR/postgres/postmaster.pid) and every process whose parent it is.",
    '',
  );
  if (server) {
    const kinds = new Map<string, { pssMb: number; count: number }>();
    for (const p of server.processes) {
      const name = p.name.replace(/^postgres:\s*/, '').trim();
      const kind = /\[local\]/.test(name) ? 'connections (backends)' : name.replace(/ \d+$/, 's');
      const k = kinds.get(kind) ?? { pssMb: 0, count: 0 };
      kinds.set(kind, { pssMb: k.pssMb + p.pssMb, count: k.count + 1 });
    }
    const parts = [...kinds].map(([kind, k]) => `${kind}${k.count > 1 ? ` (${k.count})` : ''} ${Math.round(k.pssMb * 10) / 10}`);
    lines.push(
      `Embedded server, idle, PSS in MB: ${parts.join(', ')}; ${server.pssMb} MB in all (their RSS summed: ${server.rssMb} MB, which counts shared memory and code once per process).`,
      '',
    );
  }
  return lines;
}

export function markdown(
  settings: Settings,
  quick: boolean,
  hello: HelloCeiling,
  backends: BackendResult[],
  extra: string[],
  loadAtStart: readonly number[],
): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `${settings.connections} connections, ${settings.duration} s per scenario${quick ? ' (--quick)' : ''}. Service logging at warn. ` +
      `Load average at the start: ${loads(loadAtStart)}; at the end: ${loads(os.loadavg())} (a shared machine).`,
    '',
    `Hello-world (bare Fastify, 12 bytes): **${hello.rps} req/s**, p50 ${hello.p50} ms, p99 ${hello.p99} ms, ${hello.serverCpuMs} ms of server CPU per request.`,
    '',
    'Ceilings of each read: *same payload*, a bare Fastify server answering the bytes the service answered (captured ' +
      "from it, the same requests and autocannon settings); *statements alone*, the bench's copy of the scenario's SQL through " +
      'node-postgres (pool of 10, prepared, generic plans, as the service sets its connections), as many in flight as connections, no HTTP. *of lower* is the ratio to the lower of the two. ' +
      "CPU ms/req: processor time per request of the service and of its own database's PostgreSQL backends (from /proc; other databases' are not counted); the load generator shares the cores. " +
      "The database is vacuumed (VACUUM ANALYZE) before each scenario, as autovacuum would have (it is off on the machine's PostgreSQL). " +
      "The embedded backend is the service without DATABASE_URL, on the PostgreSQL server it starts in DATA_DIR/postgres; the benchmark reaches that server on its Unix socket for the vacuum, the CPU and the statements alone, as it does the machine's.",
    '',
    ...embeddedAgainstPostgres(backends),
  ];
  for (const b of backends) {
    const db = b.scenarios.some((s) => s.databaseCpuMs > 0);
    lines.push(
      `## ${b.backend} (idle RSS ${b.idle.rssMb} MB, idle PSS ${b.idle.totalPssMb} MB${b.embedded ? ' with its server' : ''}, peak RSS ${b.peakRssMb} MB)`,
      '',
      `| scenario | req/s | cycles/s | p50 ms | p99 ms | errors | of hello-world | same payload req/s | statements alone req/s | of lower | service CPU ms/req |${db ? ' database CPU ms/req |' : ''} RSS after, MB |`,
      `|---|---|---|---|---|---|---|---|---|---|---|${db ? '---|' : ''}---|`,
    );
    for (const s of b.scenarios) {
      lines.push(
        `| ${s.name} | ${s.rps} | ${s.cyclesPerSecond} | ${s.p50} | ${s.p99} | ${s.errors} | ${pct(s.ratioToHelloWorld)} | ${s.payloadCeilingRps ?? '–'} | ${s.databaseCeilingRps ?? '–'} | ${pct(s.ratioToLowerCeiling)} | ${s.serverCpuMs} |${db ? ` ${s.databaseCpuMs} |` : ''} ${s.rssMb} |`,
      );
    }
    lines.push(
      `| R1 synthesis to a connected edge device (2 callers) | ${b.radio.rps} | | ${b.radio.deviceP50} | p95 ${b.radio.deviceP95} | ${b.radio.errors} | | | | | |${db ? ' |' : ''} ${b.radio.rssMb} |`,
      '',
    );
    const f = b.idle;
    lines.push(
      `Idle, 8 s after start: RSS ${f.rssMb} MB = mapped files (node's binary and libraries) ${f.fileMb} + anonymous ${f.anonymousMb}: ` +
        `V8 heap ${f.heapTotalMb} (${f.heapUsedMb} used, of which code and bytecode ${f.codeMb}), buffers and wasm memory outside the heap ${f.externalMb}, other native (allocator, libuv, threads) ${f.nativeMb < 0 ? '– (part of the heap and of the wasm memory is reserved, not resident)' : f.nativeMb}. ` +
        `PSS: the service ${f.pssMb} MB${f.embedded ? `, its embedded server ${f.embedded.pssMb} MB (${f.embedded.processes.length} processes)` : " (the machine's PostgreSQL is shared, not counted)"}, together ${f.totalPssMb} MB.`,
      '',
    );
    if (b.start)
      lines.push(
        `Start to "Server listening" (median of ${b.start.first.length}): first ${seconds(b.start.firstMs)}${b.embedded ? ' (initdb included)' : ' (migrations included)'}, later ${seconds(b.start.laterMs)}; processor time ${seconds(b.start.firstCpuMs)} and ${seconds(b.start.laterCpuMs)}.`,
        '',
      );
    if (!db) lines.push('No database CPU was counted: the database is not on this machine.', '');
    lines.push(...sessionsMarkdown(`### ${b.backend}: sign-in and sessions (issue 32)`, sessionCosts(b.scenarios), [b.signInLoad]));
    if (b.history) {
      const h = b.history;
      lines.push(
        `### ${b.backend} with history: ${h.rows.toLocaleString('en')} picked-up orders and ${h.rows.toLocaleString('en')} completed CFH requests (\`--history ${h.rows}\`)`,
        '',
        `Filled in SQL: ${Object.entries(h.fillSeconds)
          .map(([k, v]) => `${k} ${v} s`)
          .join(', ')}.`,
        '',
        `A second service on a second database holds the history; each scenario ran ${h.rounds} rounds on each, alternating (bench/history/run.ts), ` +
          "so the machine's other load weighs on both alike. Figures are medians of the rounds; *CPU of empty* compares the service's and its database's CPU per request.",
        '',
        '| scenario | req/s (empty) | of empty | each round | p99 ms (empty) | errors | service CPU ms/req (empty) | database CPU ms/req (empty) | CPU of empty |',
        '|---|---|---|---|---|---|---|---|---|',
      );
      for (const s of h.scenarios) {
        lines.push(
          `| ${s.name} | ${s.rps} (${s.empty.rps}) | ${pct(s.ratioToEmpty)} | ${s.roundRatios.map(pct).join(', ')} | ${s.p99} (${s.empty.p99}) | ${s.errors} | ${s.serverCpuMs} (${s.empty.serverCpuMs}) | ${s.databaseCpuMs} (${s.empty.databaseCpuMs}) | ${pct(s.cpuRatioToEmpty)} |`,
        );
      }
      lines.push(
        '',
        `P1 of one store through HTTP (median / max of 5): ${Object.entries(h.reports.p1)
          .map(([k, v]) => `${k} ${v.median} / ${v.max} ms (target < ${v.targetMs})`)
          .join('; ')}.`,
        '',
      );
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
