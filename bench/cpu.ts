// CPU time per request, read from /proc: the service's own process and, when PostgreSQL runs on
// this machine, its server processes. It tells where a scenario's time goes whatever else the
// machine is doing, which requests per second alone cannot.
import fs from 'node:fs';

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

/** Every process with this command name (PostgreSQL's postmaster and backends are "postgres"). */
function ticksOfName(name: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) total += processTicks(stat);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

export interface CpuSample {
  server: number;
  database: number;
}

/** CPU ticks so far of the server process and of every local PostgreSQL process. */
export function sampleCpu(serverPid: number, localDatabase: boolean): CpuSample {
  return {
    server: ticksOfPid(serverPid),
    database: localDatabase ? ticksOfName('postgres') : 0,
  };
}

/** Milliseconds of CPU per request between two samples. */
export function cpuMsPerRequest(before: CpuSample, after: CpuSample, requests: number): CpuSample {
  const ms = (ticks: number) => (requests > 0 ? Math.round(((ticks * 1000) / TICKS_PER_SECOND / requests) * 1000) / 1000 : 0);
  return { server: ms(after.server - before.server), database: ms(after.database - before.database) };
}

/** Is the database at this URL served by this machine (so its processes can be measured)? */
export function isLocalDatabase(url: string | null): boolean {
  if (url === null) return false;
  const host = new URL(url).hostname;
  return host === '' || host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}
