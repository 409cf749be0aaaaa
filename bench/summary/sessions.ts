// Issue 32's figures from a run's scenarios: what a person's session costs a read, and C5's p99
// beside password sign-ins. The session's lookup is getSession signed in less getSession signed
// out: the same route and a view of the same size, with and without the statement that finds the
// session (sessions, people, memberships and store devices) and the person made from its row.
import { failures, SIGN_IN_GOAL, type Phase, type SignInLoadResult } from '../scenarios/sign-in-load.ts';

export const SESSION_GOAL = { extraServiceCpuMs: 0.2 } as const;

interface Figures {
  name: string;
  rps: number;
  p99: number;
  serverCpuMs: number;
  databaseCpuMs: number;
}

export interface SessionCosts {
  consoleRead: Figures | null;
  c5: Figures | null;
  signedIn: Figures | null;
  signedOut: Figures | null;
  /** CPU ms per request of the session's lookup (signed in less signed out); null: not measured. */
  lookup: { serverCpuMs: number; databaseCpuMs: number } | null;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function sessionCosts(scenarios: readonly Figures[]): SessionCosts {
  const find = (name: string): Figures | null => {
    const s = scenarios.find((x) => x.name === name);
    return s === undefined ? null : { name: s.name, rps: s.rps, p99: s.p99, serverCpuMs: s.serverCpuMs, databaseCpuMs: s.databaseCpuMs };
  };
  const signedIn = find('session read (signed in)');
  const signedOut = find('session read (signed out)');
  return {
    consoleRead: find('console queue read (signed in)'),
    c5: find('C5 read'),
    signedIn,
    signedOut,
    lookup:
      signedIn && signedOut
        ? { serverCpuMs: r3(signedIn.serverCpuMs - signedOut.serverCpuMs), databaseCpuMs: r3(signedIn.databaseCpuMs - signedOut.databaseCpuMs) }
        : null,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Markdown lines: the session's cost, then each sign-in load run. */
export function sessionsMarkdown(heading: string, costs: SessionCosts, loads: readonly SignInLoadResult[]): string[] {
  const lines = [heading, ''];
  const cpu = (f: Figures | null) => (f === null ? '–' : `${f.serverCpuMs} + ${f.databaseCpuMs}`);
  lines.push(
    '| read | req/s | p99 ms | CPU ms/req, service + database |',
    '|---|---|---|---|',
    ...[costs.consoleRead, costs.c5, costs.signedIn, costs.signedOut]
      .filter((f): f is Figures => f !== null)
      .map((f) => `| ${f.name} | ${f.rps} | ${f.p99} | ${cpu(f)} |`),
    '',
  );
  if (costs.lookup) {
    const within = costs.lookup.serverCpuMs <= SESSION_GOAL.extraServiceCpuMs;
    lines.push(
      `The session's lookup (getSession signed in less signed out: the statement, the person made from its row, and the signed-in view's few more fields and CSRF token): **${costs.lookup.serverCpuMs} ms of service CPU** and ${costs.lookup.databaseCpuMs} ms of database CPU per request. ` +
        `A console read with the former token session also ran one statement to find it, so a signed-in read costs more than it did by less than this whole lookup: ` +
        `${within ? `within the goal's ${SESSION_GOAL.extraServiceCpuMs} ms` : `**above the goal's ${SESSION_GOAL.extraServiceCpuMs} ms**, which this bound alone cannot settle`}.`,
      '',
    );
  }
  for (const r of loads) {
    const loop = (p: Phase) => (p.eventLoopDelayMs === null ? '–' : `${p.eventLoopDelayMs.p99} / ${p.eventLoopDelayMs.max}`);
    lines.push(
      `C5 read ${r.c5Rate === null ? `at ${r.connections} connections (as fast as they go)` : `at a fixed ${r.c5Rate} req/s over ${r.connections} connections`}, ${r.seconds} s phases, ` +
        `alone and beside ${r.rate} password sign-ins a second, alternating: p99 **${r.p99Alone} ms alone, ${r.p99WithSignIns} ms with sign-ins, ratio ${r.p99Ratio}** ` +
        `(goal ≤ ${SIGN_IN_GOAL.p99Ratio}: ${r.met ? 'met' : '**not met**'}). Sign-ins: ${r.signIns.succeeded} of ${r.signIns.asked} succeeded (${r.signIns.perSecond} a second), ` +
        `failed: ${failures(r.signIns)}; p50 ${r.signIns.p50} ms, p99 ${r.signIns.p99} ms.`,
      '',
      '| phase | C5 req/s | p50 ms | p99 ms | errors | CPU ms per C5 request, service + database | event loop delay p99 / max ms |',
      '|---|---|---|---|---|---|---|',
    );
    const rounds = Math.max(r.alone.length, r.withSignIns.length);
    for (let i = 0; i < rounds; i++) {
      const order: [string, Phase | undefined][] =
        i % 2 === 0
          ? [
              ['alone', r.alone[i]],
              ['with sign-ins', r.withSignIns[i]],
            ]
          : [
              ['with sign-ins', r.withSignIns[i]],
              ['alone', r.alone[i]],
            ];
      for (const [name, p] of order) {
        if (p) lines.push(`| ${i + 1}: ${name} | ${p.rps} | ${p.p50} | ${p.p99} | ${p.errors} | ${p.serverCpuMs} + ${p.databaseCpuMs} | ${loop(p)} |`);
      }
    }
    lines.push(
      '',
      `Medians: C5 ${Math.round(median(r.alone.map((p) => p.rps)))} req/s alone, ${Math.round(median(r.withSignIns.map((p) => p.rps)))} with sign-ins.`,
      '',
    );
  }
  return lines;
}
