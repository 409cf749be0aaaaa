// `npm start` as a supervisor or a container runs it: the signal goes to npm's own process, and the
// service must still shut down gracefully and give back its ports and its data directory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { processAlive } from '../../src/db/data-dir-lock.ts';

const root = path.resolve(import.meta.dirname, '../..');

const alive = processAlive;

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} sent to the npm start process shuts the service down gracefully and leaves nothing behind`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-npm-'));
    fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
    const dataDir = path.join(dir, 'data');
    // npm itself runs on whatever node is on PATH; the script runs the project's pinned node.
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, PORT: '0', HOST: '127.0.0.1', MQTT_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    let servicePid = 0;
    t.after(() => {
      if (servicePid > 0 && alive(servicePid)) process.kill(servicePid, 'SIGKILL');
      if (npm.exitCode === null) npm.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    });

    let url = '';
    for (let i = 0; i < 1200 && url === ''; i++) {
      const m = /"pid":(\d+)[^\n]*Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1] && m[2]) {
        servicePid = Number(m[1]);
        url = m[2];
      } else if (npm.exitCode !== null) {
        assert.fail(`npm start exited: ${out}`);
      } else {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(url !== '', `npm start did not listen: ${out}`);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    assert.match(out, new RegExp(`storeops: ready at ${url}: the console is at ${url}/console\n`), 'says where to point a browser, whatever LOG_LEVEL is');
    assert.ok(fs.existsSync(path.join(dataDir, 'storeops.lock')), 'the running service holds the data directory');

    // A first start on the embedded defaults fits a small store box (initdb runs in its own process).
    const status = `/proc/${servicePid}/status`;
    if (fs.existsSync(status)) {
      const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(status, 'utf8'))?.[1]);
      assert.ok(peakKb > 0 && peakKb < 500 * 1024, `the first start peaked at ${Math.round(peakKb / 1024)} MB (limit 500 MB)`);
    }
    const server = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    assert.ok(alive(server), 'the embedded database server runs');
    assert.ok(npm.pid !== undefined && npm.pid !== servicePid, 'the signal goes to npm, not to the service directly');
    process.kill(npm.pid, signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    for (let i = 0; i < 200 && alive(servicePid); i++) await new Promise((r) => setTimeout(r, 50));

    assert.ok(!alive(servicePid), 'the service process is gone, not left running under PID 1');
    for (let i = 0; i < 200 && alive(server); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!alive(server), 'the embedded database server stopped with it');
    assert.match(out, new RegExp(`"signal":"${signal}","msg":"shutting down"`), 'the graceful shutdown ran');
    assert.ok(!fs.existsSync(path.join(dataDir, 'storeops.lock')), 'the data-directory lock is released');
    assert.ok(await refused(Number(new URL(url).port)), 'the HTTP port is released');
  });
}
