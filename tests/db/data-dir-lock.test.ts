// One service per data directory: the lock names a live owner, and a lock whose process is gone,
// or whose pid now belongs to another process (a restart reused it), is taken over.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DataDirLockedError, lockDataDir, lockPath } from '../../src/db/data-dir-lock.ts';

function dir(t: { after: (fn: () => void) => void }): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-lock-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

const startOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

test('a data directory held by a live process is refused, naming its pid', { skip: !fs.existsSync('/proc/self/stat') && 'needs /proc' }, async (t) => {
  const d = dir(t);
  const other = spawn('sleep', ['30']);
  t.after(() => other.kill());
  await new Promise((r) => other.once('spawn', r));
  fs.writeFileSync(lockPath(d), `${other.pid} ${startOf(other.pid as number)}`);
  assert.throws(
    () => lockDataDir(d),
    (err: unknown) => err instanceof DataDirLockedError && err.pid === other.pid && err.message.includes(`(pid ${other.pid})`),
  );
});

test('a lock whose pid now belongs to another process, or to none, is taken over', { skip: !fs.existsSync('/proc/self/stat') && 'needs /proc' }, (t) => {
  const d = dir(t);
  fs.writeFileSync(lockPath(d), `1 ${Number(startOf(1)) + 1}`); // pid 1 is alive, but started at another time
  const release = lockDataDir(d);
  assert.equal(fs.readFileSync(lockPath(d), 'utf8').split(' ')[0], String(process.pid));
  release();
  fs.writeFileSync(lockPath(d), '2147483646'); // no such process
  lockDataDir(d)();
  assert.ok(!fs.existsSync(lockPath(d)), 'released');
});
