// The parts of the report other benchmarks measure, each run as its own process and read from its
// JSON: the fleet (bench/fleet/fleet.ts) and, when it exists, live streams and webhooks (bench/live/live.ts).
// Their figures go into the report as they come; their failures are theirs, not the scenarios' errors.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Embedded {
  command: string;
  exitCode: number | null;
  seconds: number;
  result: unknown;
}

/** Runs `node <script> ...args --json FILE`; the JSON is FILE's, or else the last line of its stdout. */
export async function runJson(root: string, script: string, args: string[], log: (line: string) => void): Promise<Embedded> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-embedded-')), 'out.json');
  const all = [script, ...args, '--json', file];
  const command = `node ${all.join(' ')}`;
  log(`\nrunning ${command}`);
  const started = performance.now();
  const child = spawn(process.execPath, all, { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-200_000)));
  child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let result: unknown = null;
  try {
    result = JSON.parse(fs.existsSync(file) && fs.statSync(file).size > 0 ? fs.readFileSync(file, 'utf8') : (stdout.trim().split('\n').at(-1) ?? ''));
  } catch {
    log(`${script} wrote no JSON (exit ${exitCode}); its last output:\n${stdout.slice(-2000)}`);
  }
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return { command, exitCode, seconds: Math.round((performance.now() - started) / 1000), result };
}

export function exists(root: string, script: string): boolean {
  return fs.existsSync(path.join(root, script));
}
