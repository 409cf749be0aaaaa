// A full disk under the embedded database: requests that write are refused with 503 while it is
// full, nothing half-written is kept, and the service writes again once there is room. DATA_DIR is
// on a small tmpfs of the test's own (needs root to mount it; skipped elsewhere).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { embeddedUrl } from '../../src/db/embedded/server.ts';
import { example, listeningUrl, serverPidUnder, startService, tempDir, EXAMPLE_TOKEN as TOKEN } from './service-process.ts';

function mountable(): string | false {
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs';
  const probe = tempDir();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status === 0;
  if (mounted) spawnSync('umount', [probe]);
  return mounted ? false : 'cannot mount a tmpfs here';
}

/** Fills the filesystem of `dir` until it refuses another byte. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  for (let size = 4096; size >= 1; size = Math.floor(size / 2)) {
    try {
      for (;;) fs.writeSync(fd, chunk.subarray(0, size));
    } catch {
      // That size no longer fits: try a smaller one.
    }
  }
  fs.closeSync(fd);
  return file;
}

test('a full disk: writes are refused with 503 and nothing half-written is kept; with room again, writes succeed', { skip: mountable() }, async (t) => {
  const mount = tempDir();
  assert.equal(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=96m,mode=0755', 'tmpfs', mount]).status, 0);
  const dataDir = path.join(mount, 'data');
  const service = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  t.after(async () => {
    if (service.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    const server = serverPidUnder(mount);
    if (server !== null) process.kill(server, 'SIGQUIT');
    for (let i = 0; i < 100 && serverPidUnder(mount) !== null; i++) await new Promise((r) => setTimeout(r, 50));
    spawnSync('umount', ['-l', mount]);
  });
  const url = await listeningUrl(service);
  const create = () =>
    fetch(`${url}/api/callforhelp/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ location_id: 10, option_id: 6 }),
    });

  const filler = fill(mount);
  let created = 0;
  let refusal: Response | null = null;
  for (let i = 0; i < 5000 && refusal === null; i++) {
    const res = await create();
    if (res.status === 201) created++;
    else refusal = res;
  }
  assert.ok(refusal !== null, 'a write was refused once the disk was full');
  assert.equal(refusal.status, 503, await refusal.clone().text());
  assert.equal(((await refusal.json()) as { code: string }).code, 'unavailable');
  assert.ok(refusal.headers.get('retry-after'), 'with Retry-After');

  fs.rmSync(filler);
  let again: Response | null = null;
  for (let i = 0; i < 100; i++) {
    again = await create();
    if (again.status === 201) break;
    await new Promise((r) => setTimeout(r, 200)); // a server that PANICked recovers first
  }
  assert.equal(again?.status, 201, 'writes succeed once there is room');
  created++;

  const client = new pg.Client({ connectionString: embeddedUrl(dataDir) });
  await client.connect();
  try {
    const { rows } = await client.query<{ requests: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM cfh_requests) AS requests,
              (SELECT count(*)::int FROM events WHERE type = 'callforhelp' AND status = 'created') AS events`,
    );
    assert.deepEqual(rows[0], { requests: created, events: created }, 'every answered request stored whole, the refused one not at all');
  } finally {
    await client.end();
  }
  service.child.kill('SIGTERM');
  assert.equal(await service.exited, 0);
});
