// PostgreSQL refuses to run as root. A service started as root runs its embedded server as an
// unprivileged system user: the owner of DATA_DIR when that is not root (the operator chose it),
// else `storeops`, created as a system user without a home or a login shell when missing.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { DatabaseStartError } from '../start-error.ts';

export interface ServerUser {
  uid: number;
  gid: number;
  name: string;
}

export const SERVER_USER = 'storeops';

/** Thrown with one line for the operator. */
export class ServerUserError extends DatabaseStartError {}

function lookup(name: string): ServerUser | null {
  const result = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  if (result.status !== 0) return null;
  const uid = Number(result.stdout.trim());
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid, name };
}

function nameOf(uid: number): string {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[2] === String(uid));
  return line?.split(':')[0] ?? String(uid);
}

/** Who runs the server: null when the service itself is not root (the server runs as the service). */
export function serverUser(dataDir: string): ServerUser | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const owner = fs.statSync(dataDir);
  if (owner.uid !== 0) return { uid: owner.uid, gid: owner.gid, name: nameOf(owner.uid) };
  const found = lookup(SERVER_USER);
  if (found !== null) return found;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', SERVER_USER], {
      stdio: 'pipe',
    });
  } catch (err) {
    if (lookup(SERVER_USER) === null) {
      throw new ServerUserError(
        `the service runs as root and PostgreSQL does not: it needs a system user \`${SERVER_USER}\` to run the embedded server, and useradd failed ` +
          `(${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}); create that user, give DATA_DIR to another user (chown), or run the service as a user other than root`,
      );
    }
  }
  const made = lookup(SERVER_USER);
  if (made === null) throw new ServerUserError(`could not find the system user \`${SERVER_USER}\` after creating it`);
  return made;
}

/** Whether `user` can enter `dir` (its parents must let it through). */
export function canEnter(user: ServerUser, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid }).status === 0;
}
