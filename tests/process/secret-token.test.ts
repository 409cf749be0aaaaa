// The generated secret token over the life of an embedded install: said where it comes from at each
// start, rotated with `npm run secret-token -- --rotate` (printed once), the old one refused after.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');

interface Running {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function serve(t: test.TestContext, env: Record<string, string>): Running {
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', MQTT_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, out: () => out, exited };
}

async function urlOf(run: Running): Promise<string> {
  for (let i = 0; i < 1200; i++) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.out());
    if (m?.[1]) return m[1];
    if (run.child.exitCode !== null) assert.fail(`exited: ${run.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return assert.fail(`did not start: ${run.out()}`);
}

function secretTokenScript(dataDir: string, args: string[]): { status: number | null; out: string } {
  const result = spawnSync('npm', ['run', '--silent', 'secret-token', '--', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dataDir, DATA_DIR: dataDir },
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

const refused = async (url: string, token: string) => (await fetch(`${url}/api/lockers/locations/1?secret_token=${token}`)).status === 401;

test('a rotated secret token is printed once and replaces the generated one; each start says where the token comes from', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-secret-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');

  const first = serve(t, { DATA_DIR: dataDir });
  const firstUrl = await urlOf(first);
  const generated = /SECRET_TOKEN was not set[^\n]*\n\s*\n\s+(\S+)/.exec(first.out())?.[1] as string;
  assert.ok(generated);
  assert.ok(!(await refused(firstUrl, generated)));

  // Rotated while the service runs: through its database server; the running service keeps the
  // token it started with until it restarts, as the command says.
  const rotated = secretTokenScript(dataDir, ['--rotate']);
  assert.equal(rotated.status, 0, rotated.out);
  const token = /keep it:\s*\n\s*\n\s+(\S+)/.exec(rotated.out)?.[1] as string;
  assert.ok(token && token.length >= 32 && token !== generated, rotated.out);
  assert.equal(rotated.out.split(token).length, 2, 'printed once');
  assert.match(rotated.out, /restart every running instance/);
  assert.ok(!(await refused(firstUrl, generated)), 'the running service still takes the token it started with');

  await fetch(`${firstUrl}/healthz`);
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  assert.doesNotMatch(first.out(), /"url":"\/healthz"/, '/healthz is not logged at info');

  const second = serve(t, { DATA_DIR: dataDir });
  const url = await urlOf(second);
  assert.match(second.out(), /SECRET_TOKEN is not set: the locker operations take the token generated on \d{4}-\d\d-\d\d/);
  assert.match(second.out(), /Set SECRET_TOKEN to use your own, or make a new one with `npm run secret-token -- --rotate`/);
  assert.ok(!second.out().includes(token), 'the token is not printed again');
  assert.ok(await refused(url, generated), 'the old token is refused');
  assert.ok(!(await refused(url, token)), 'the new token is taken');
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);

  const told = secretTokenScript(dataDir, []);
  assert.equal(told.status, 0);
  assert.match(told.out, /the secret token is the one generated on .* it cannot be shown again/);
  assert.ok(!told.out.includes(token));
});
