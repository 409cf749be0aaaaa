// CPU time per request, read from /proc: the service's own process and, when PostgreSQL runs on
// this machine (the machine's server, or the service's embedded one on its Unix socket), the
// backends of the service's database. It tells where a scenario's time goes whatever else the
// machine is doing, which requests per second alone cannot.
import type { Result } from 'autocannon';
import fs from 'node:fs';
import pg from 'pg';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function processTicks(stat: string): number {
  // Fields after "(comm) ": state is field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function ticksOfPid(pid: number): number {
  try {
    return processTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0; // the process has ended
  }
}

/** A process's CPU time so far (user + system), in ms; null once it has ended. */
export function cpuMsOfPid(pid: number): number | null {
  try {
    return (processTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export interface CpuSample {
  server: number;
  /** Ticks so far of each PostgreSQL backend measured, by pid. */
  database: Map<number, number>;
}

/**
 * CPU ticks so far of the server process and of the given PostgreSQL backends (those of the
 * benchmark's own database: see databaseBackends; the machine's other databases, other
 * developers' tests among them, are not counted).
 */
export function sampleCpu(serverPid: number, databasePids: readonly number[] = []): CpuSample {
  return { server: ticksOfPid(serverPid), database: new Map(databasePids.map((pid) => [pid, ticksOfPid(pid)])) };
}

/**
 * The pids of the backends connected to this database, when it runs on this machine (else none).
 * Sampled before and after a run: a backend that starts and ends inside it is not counted, and
 * neither are PostgreSQL's shared processes (WAL writer, checkpointer), which serve every database.
 */
export async function databaseBackends(url: string | null): Promise<number[]> {
  if (url === null || !isLocalDatabase(url)) return [];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

export interface CpuMs {
  server: number;
  database: number;
}

/** A load run with the CPU it cost per request: the service's, and its database's backends' (PostgreSQL on this machine). */
export async function measureCpu(serverPid: number, databaseUrl: string | null, run: () => Promise<Result>): Promise<{ loaded: Result; cpu: CpuMs }> {
  const pids = await databaseBackends(databaseUrl);
  const before = sampleCpu(serverPid, pids);
  const loaded = await run();
  const after = sampleCpu(serverPid, [...new Set([...pids, ...(await databaseBackends(databaseUrl))])]);
  return { loaded, cpu: cpuMsPerRequest(before, after, loaded.requests.total) };
}

/**
 * Milliseconds of CPU per request between two samples. A backend counts from its first sample
 * (0 when it started during the run); one that ended during the run is left out (its ticks are
 * gone), so the database figure is never negative, at worst a little low.
 */
export function cpuMsPerRequest(before: CpuSample, after: CpuSample, requests: number): CpuMs {
  const ms = (ticks: number) => (requests > 0 ? Math.round(((ticks * 1000) / TICKS_PER_SECOND / requests) * 1000) / 1000 : 0);
  let database = 0;
  for (const [pid, ticks] of after.database) {
    if (ticks === 0) continue; // ended (or never ran)
    database += Math.max(0, ticks - (before.database.get(pid) ?? 0));
  }
  return { server: ms(after.server - before.server), database: ms(database) };
}

/**
 * Is the database at this URL served by this machine (so its processes can be measured)? A Unix
 * socket is: the embedded server's URL names its socket directory in the `host` query parameter
 * (`postgresql://storeops@localhost/storeops?host=%2F...%2Fpostgres`), which node-postgres prefers
 * to the URL's host, as libpq does.
 */
export function isLocalDatabase(url: string | null): boolean {
  if (url === null) return false;
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? parsed.hostname;
  return host === '' || host.startsWith('/') || host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}
