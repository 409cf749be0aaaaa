// The test suite's database server, started once by `npm test` (scripts/test.ts): an embedded
// PostgreSQL server in a temporary directory, or the server of TEST_DATABASE_URL. On it, a template
// database migrated once; each test file makes its own database from it (support/db.ts). Whatever
// a run made is named by its run id and removed at its end, also after Ctrl-C; what a killed run
// left behind is removed by the next.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDb } from '../../src/db/db.ts';
import { processAlive } from '../../src/db/data-dir-lock.ts';
import { serverDir, startEmbeddedServer } from '../../src/db/embedded/server.ts';
import { migrate } from '../../src/db/migrate.ts';

/** What the test processes are told (environment variables). */
export const ENV_SERVER = 'TEST_DATABASE_URL';
export const ENV_TEMPLATE = 'TEST_TEMPLATE_DATABASE';
export const ENV_RUN = 'TEST_RUN_ID';

const TMP_PREFIX = 'storeops-test-';

/** Speed over durability: the suite's server is thrown away with its run. */
const TEST_SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' };

export interface SuiteDatabase {
  /** The server (its default database): what the test processes connect to for admin work. */
  url: string;
  template: string;
  runId: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** The URL of another database on the same server. */
export function databaseUrl(serverUrl: string, name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Servers and directories of runs that were killed: their runner's pid is gone. */
async function removeLeftovers(): Promise<void> {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const match = new RegExp(`^${TMP_PREFIX}(\\d+)-`).exec(name);
    if (match === null || processAlive(Number(match[1]))) continue;
    const dir = path.join(os.tmpdir(), name);
    try {
      const pid = Number(fs.readFileSync(path.join(serverDir(dir), 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0 && processAlive(pid)) process.kill(pid, 'SIGQUIT');
    } catch {
      // No server there.
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function startSuiteDatabase(externalUrl: string | undefined): Promise<SuiteDatabase> {
  const runId = `${Date.now().toString(36)}${crypto.randomBytes(3).toString('hex')}`;
  let url: string;
  let stopServer = async () => {};
  if (externalUrl) url = externalUrl;
  else {
    await removeLeftovers();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${TMP_PREFIX}${process.pid}-`));
    try {
      const server = await startEmbeddedServer({ dataDir: dir, settings: TEST_SETTINGS });
      url = server.url;
      stopServer = async () => {
        await server.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      };
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const template = `storeops_tpl_${runId}`;
  const dropAll = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
        `storeops_t_${runId}_%`,
        template,
      ]);
      for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  };
  try {
    await adminQuery(url, `CREATE DATABASE ${template}`);
    const db = await openDb({ url: databaseUrl(url, template), poolSize: 1 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
  } catch (err) {
    await dropAll().catch(() => {});
    await stopServer();
    throw err;
  }
  return {
    url,
    template,
    runId,
    embedded: !externalUrl,
    close: async () => {
      try {
        if (externalUrl) await dropAll();
      } finally {
        await stopServer();
      }
    },
  };
}
