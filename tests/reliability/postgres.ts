// PostgreSQL for the reliability tests: a private throwaway cluster (initdb into a temp dir, on a
// free port of 127.0.0.1) that a test may stop, crash or freeze, and a database of a test file's own
// on TEST_DATABASE_URL. The machine's shared server is only ever asked to create and drop one.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.ts';
import { atCleanup, tempDir, userIds, waitFor } from '../../scripts/lib/processes.ts';

/** Where initdb and pg_ctl are, or why a private cluster cannot be made here. */
export function postgresBinaries(): { bindir: string } | { reason: string } {
  const fromEnv = process.env.PG_BINDIR;
  const dirs = fromEnv ? [fromEnv] : [];
  if (fs.existsSync('/usr/lib/postgresql')) {
    for (const v of fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))) dirs.push(`/usr/lib/postgresql/${v}/bin`);
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) dirs.push(pgConfig.stdout.trim());
  const bindir = dirs.find((d) => fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'pg_ctl')));
  if (bindir === undefined) return { reason: 'no PostgreSQL server binaries (initdb, pg_ctl) found; set PG_BINDIR' };
  if (process.getuid?.() === 0 && userIds('postgres') === null) return { reason: 'running as root and there is no postgres user to run initdb as' };
  return { bindir };
}

export interface Cluster {
  url: string;
  port: number;
  /** pg_ctl stop -m immediate: every backend dies at once, as in a crash; restart does recovery. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT to the server and its backends: connections stay open, nothing answers
   * (a paused VM, or a network that drops packets instead of refusing them). */
  freeze(): void;
  thaw(): void;
}

/** The postmaster (first line of postmaster.pid) and its children, from /proc. */
function clusterPids(data: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === postmaster ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
  return [postmaster, ...children];
}

/** A throwaway PostgreSQL cluster (initdb into a temp dir) on a free port of 127.0.0.1. */
export async function startCluster(): Promise<Cluster> {
  const found = postgresBinaries();
  if ('reason' in found) throw new Error(found.reason);
  const dir = tempDir('pg');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = userIds('postgres') as { uid: number; gid: number };
    fs.chownSync(dir, ids.uid, ids.gid);
  }
  // initdb refuses to run as root: run the server's tools as the postgres user.
  const run = (tool: string, args: string[]) => {
    const cmd = path.join(found.bindir, tool);
    const r = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}${r.stdout}`);
  };
  const data = path.join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50 -c shared_buffers=16MB`;
  let started = false;
  const cluster: Cluster = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
      started = true;
    },
    async stop() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      started = false;
    },
    freeze() {
      for (const pid of clusterPids(data)) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of clusterPids(data)) process.kill(pid, 'SIGCONT');
    },
  };
  atCleanup(async () => {
    if (!started) return;
    cluster.thaw();
    await cluster.stop();
  });
  await cluster.start();
  return cluster;
}

/** A database of this file's own on the server of `serverUrl`, dropped at the end. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const name = `storeops_rel_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  atCleanup(async () => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A plain pg pool onto a test's database, for reading what the services wrote; closed at the end. */
export function inspect(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  atCleanup(() => pool.end());
  return pool;
}

/** Waits for the schedulers to have run every job due by two seconds from now. */
export function dueJobsDone(db: pg.Pool, what: string): Promise<void> {
  return waitFor(
    what,
    async () => {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE done_at IS NULL AND run_at <= now() + interval '2 seconds'");
      return rows[0].n === 0;
    },
    { tries: 150 },
  );
}
