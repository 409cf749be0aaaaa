// A server under test in a child process: started on free ports, its peak RSS read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../scripts/lib/free-port.ts';

export interface Server {
  url: string;
  mqttPort: number;
  pid: number;
  peakRssKb(): number;
  /** Resident memory now. */
  rssKb(): number;
  stop(): Promise<void>;
}

/**
 * The Node flags `npm start` gives the service (package.json's start script), so the benchmark
 * measures the process as it runs in production.
 */
export function serviceNodeFlags(root: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export async function startServer(root: string, args: string[], env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const mqttPort = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    args.map((a) => (a.endsWith('.ts') ? path.join(root, a) : a)),
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', MALLOC_ARENA_MAX: '2' /* as npm start sets it */, ...env, PORT: String(port), MQTT_PORT: String(mqttPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const pid = child.pid as number;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, statusKb(pid, 'VmHWM'))), 500);
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // A server that dies under load would otherwise show only as the load generator's errors.
      if (!stopping) process.stderr.write(`\nthe server (pid ${pid}) exited unexpectedly (${signal ?? `code ${code}`}); its last output:\n${output}\n`);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const probe = args.some((a) => /hello|payload-server/.test(a)) ? '/' : '/readyz';
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${output}`);
    try {
      if ((await fetch(`${url}${probe}`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 1200) throw new Error(`the server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    mqttPort,
    pid,
    peakRssKb: () => Math.max(peak, statusKb(pid, 'VmHWM')),
    rssKb: () => statusKb(pid, 'VmRSS'),
    async stop() {
      peak = Math.max(peak, statusKb(pid, 'VmHWM'));
      clearInterval(sampler);
      stopping = true;
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
