// A service process as an operator starts it (node src/main.ts), for the tests of the process.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

export const root = path.resolve(import.meta.dirname, '../..');
export const example = path.join(root, 'examples/provision.json');
/** The chat-bot token of examples/provision.json. */
export const EXAMPLE_TOKEN = 'example-api-token-change-me-00001';

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];

export function startService(env: Record<string, string>): Running {
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', MQTT_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  started.push(child);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** The URL the service listens at, once it does: a first start makes its database first, which on
 * a loaded machine takes a while; no time is asserted here. */
export async function listeningUrl(service: Running): Promise<string> {
  for (let i = 0; i < 2400; i++) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(service.stdout());
    if (m?.[1]) return m[1];
    if (service.child.exitCode !== null) throw new Error(`exited: ${service.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`did not start: ${service.stdout()} ${service.stderr()}`);
}

const tempDirs: string[] = [];
export const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  tempDirs.push(dir);
  return dir;
};

/** The embedded server of a data directory somewhere under `dir`, if one runs (a test that failed
 * half-way, or killed its service on purpose): its postmaster's pid. */
export function serverPidUnder(dir: string): number | null {
  for (const file of fs.globSync('**/postgres/postmaster.pid', { cwd: dir })) {
    const pid = Number(fs.readFileSync(path.join(dir, file), 'utf8').split('\n')[0]);
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      // Gone.
    }
  }
  return null;
}

after(() => {
  // A test that failed half-way leaves its service running: it goes first, then its server.
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of tempDirs) {
    const pid = serverPidUnder(dir);
    if (pid !== null) process.kill(pid, 'SIGQUIT');
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // A mount point a test could not unmount: left for the system's tmp cleaning.
    }
  }
});
