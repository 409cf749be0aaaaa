// The service as a process: how a newcomer and an operator meet it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const example = path.join(root, 'examples/provision.json');

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startService(env: Record<string, string>): Running {
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
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function listeningUrl(service: Running): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(service.stdout());
    if (m?.[1]) return m[1];
    if (service.child.exitCode !== null) throw new Error(`exited: ${service.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`did not start: ${service.stdout()} ${service.stderr()}`);
}

const tempDirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-'));
  tempDirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

test('a bad PORT stops the start with a message naming it', async () => {
  const service = startService({ PORT: 'not-a-port', DATA_DIR: tempDir() });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /PORT: must be a whole number/);
});

test('a broken provisioning file stops the start naming the bad entry', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'broken.json');
  fs.writeFileSync(file, JSON.stringify({ lockers: [{ id: 1, location_id: 1, name: 'x', api_key: 'k'.repeat(20), cabinets: 'none' }] }));
  const service = startService({ DATA_DIR: path.join(dir, 'data'), PROVISION_FILE: file });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /lockers\[0\]\.cabinets: must be an array/);
});

test('a fresh start generates and prints a secret token once, serves, keeps secrets out of its logs, and stops on SIGTERM', async () => {
  const dataDir = tempDir();
  const first = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(first);
  const printed = /SECRET_TOKEN was not set[^\n]*\n\s*\n\s+(\S+)/.exec(first.stdout())?.[1];
  assert.ok(printed && printed.length >= 32, 'the generated token is printed');

  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string };
  assert.equal(doc.openapi, '3.1.0');
  assert.equal((await fetch(`${url}/docs/`)).status, 200);
  const secrets = ['query-secret-value-123456', 'bearer-secret-value-123456', 'apikey-secret-value-123456'];
  await fetch(`${url}/readyz?secret_token=${secrets[0]}`, { headers: { authorization: `Bearer ${secrets[1]}`, 'api-key': secrets[2] as string } });

  const second = startService({ DATA_DIR: dataDir });
  assert.equal(await second.exited, 2, 'a second process on the same data directory is refused');
  assert.match(second.stderr(), /in use by another storeops process/);

  const stoppedAt = Date.now();
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  assert.ok(Date.now() - stoppedAt < 10_000, 'exits within seconds');
  for (const secret of secrets) assert.ok(!first.stdout().includes(secret), 'no secret in a log line');
  assert.equal(first.stdout().split(printed).length, 2, 'the generated token appears once, in its notice');
  assert.match(first.stdout(), /secret_token=\[REDACTED\]/);

  const again = startService({ DATA_DIR: dataDir });
  await listeningUrl(again);
  assert.ok(!again.stdout().includes('SECRET_TOKEN was not set'), 'printed only on the start that made it');
  again.child.kill('SIGINT');
  assert.equal(await again.exited, 0);
});
