// A first start that cannot go on says why in one line naming the variable to look at, without a
// stack; a database that comes up late is waited for, a line per attempt.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.ts';
import { startService, tempDir, type Running } from './service-process.ts';

const testDatabaseUrl = process.env.TEST_DATABASE_URL;

function start(t: test.TestContext, env: Record<string, string>): Running {
  const run = startService({ DATA_DIR: path.join(tempDir(), 'data'), ...env });
  t.after(async () => {
    if (run.child.exitCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  return run;
}

/** The lines a failed start wrote to stderr: one cause, no stack. */
function assertOneLineCause(run: Running, pattern: RegExp): void {
  const lines = run
    .stderr()
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^npm warn/.test(l));
  const last = lines.at(-1) ?? '';
  assert.match(last, pattern, run.stderr());
  assert.ok(!/^\s+at /m.test(run.stderr()), `no stack trace: ${run.stderr()}`);
}

async function listening(run: Running): Promise<string> {
  for (let i = 0; i < 1200; i++) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout());
    if (m?.[1]) return m[1];
    if (run.child.exitCode !== null) assert.fail(`exited: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return assert.fail(`did not start: ${run.stderr()}`);
}

test('an HTTP port in use stops the start in one line naming PORT', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const run = start(t, { PORT: String(port) });
  assert.equal(await run.exited, 2);
  assertOneLineCause(run, new RegExp(`PORT ${port} is already in use`));
});

test('an unreachable database is waited for DATABASE_WAIT_SECONDS, a line per attempt, then named in one line', async (t) => {
  const port = await freePort();
  const run = start(t, { DATABASE_URL: `postgres://storeops:secret-password@127.0.0.1:${port}/storeops`, DATABASE_WAIT_SECONDS: '2' });
  assert.equal(await run.exited, 2);
  assert.match(run.stderr(), /waiting for the database at 127\.0\.0\.1:\d+\/storeops \(DATABASE_URL\): connection refused; attempt 1/);
  assertOneLineCause(
    run,
    /the database at 127\.0\.0\.1:\d+\/storeops \(DATABASE_URL\) is not reachable: connection refused; waited 2 s \(DATABASE_WAIT_SECONDS\)/,
  );
  assert.ok(!run.stderr().includes('secret-password'), 'the password of DATABASE_URL is never printed');
});

test('a DATABASE_URL that is no postgres URL stops the start naming it', async (t) => {
  const run = start(t, { DATABASE_URL: 'mysql://db:3306/storeops' });
  assert.equal(await run.exited, 2);
  assertOneLineCause(run, /DATABASE_URL: must start with postgres:\/\//);
});

test(
  'a missing database is named with DATABASE_URL, at once',
  { skip: testDatabaseUrl ? false : 'needs TEST_DATABASE_URL (a PostgreSQL server)' },
  async (t) => {
    const url = new URL(testDatabaseUrl as string);
    url.pathname = `/storeops_missing_${crypto.randomBytes(4).toString('hex')}`;
    const run = start(t, { DATABASE_URL: url.toString(), DATABASE_WAIT_SECONDS: '60' });
    assert.equal(await run.exited, 2);
    assertOneLineCause(run, /the database "storeops_missing_[0-9a-f]+" does not exist on [^ ]+ \(DATABASE_URL\): create it/);
    assert.doesNotMatch(run.stderr(), /waiting for the database/, 'waiting cannot make a database exist');
  },
);

test(
  'a database that comes up after the service is waited for, then served',
  { skip: testDatabaseUrl ? false : 'needs TEST_DATABASE_URL (a PostgreSQL server)' },
  async (t) => {
    const admin = new URL(testDatabaseUrl as string);
    const name = `storeops_late_${crypto.randomBytes(4).toString('hex')}`;
    const adminClient = new pg.Client({ connectionString: admin.toString() });
    await adminClient.connect();
    await adminClient.query(`CREATE DATABASE ${name}`);
    t.after(async () => {
      await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminClient.end();
    });
    // The "late database": a port that refuses connections until, a few seconds in, it starts
    // forwarding to the real server.
    const port = await freePort();
    // The suite's own server listens on a Unix socket only (its URL's host parameter).
    const socketDir = admin.searchParams.get('host');
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const server = socketDir ? net.connect(path.join(socketDir, `.s.PGSQL.${admin.port || 5432}`)) : net.connect(Number(admin.port || 5432), admin.hostname);
      for (const s of [client, server]) {
        sockets.add(s);
        s.on('error', () => {});
      }
      client.pipe(server).pipe(client);
    });
    t.after(() => {
      for (const s of sockets) s.destroy();
      proxy.close();
    });
    const url = new URL(`postgres://127.0.0.1:${port}/${name}`);
    url.username = admin.username;
    url.password = admin.password;
    const run = start(t, { DATABASE_URL: url.toString(), DATABASE_WAIT_SECONDS: '60' });
    for (let i = 0; i < 400 && !/attempt 2/.test(run.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(run.stderr(), /waiting for the database .*attempt 2/);
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    const base = await listening(run);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  },
);
