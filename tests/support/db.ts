// The test processes' databases: each test file gets a database of its own, made from the run's
// migrated template (support/suite-database.ts, started by `npm test`), and dropped at the file's
// end; fresh unmigrated ones for the migration tests.
import crypto from 'node:crypto';
import { openDb, type Db } from '../../src/db/db.ts';
import { adminQuery, databaseUrl, ENV_RUN, ENV_SERVER, ENV_TEMPLATE } from './suite-database.ts';
import { closeAtEnd, closeDatabaseAtEnd, closeWith, type Teardown } from './teardown.ts';

/** Whether the suite runs on an external server (TEST_DATABASE_URL given to `npm test`) rather than its own embedded one. */
export const onExternalServer = process.env.TEST_EXTERNAL_DATABASE === '1';

function suite(): { server: string; template: string; runId: string } {
  const server = process.env[ENV_SERVER];
  const template = process.env[ENV_TEMPLATE];
  const runId = process.env[ENV_RUN];
  if (!server || !template || !runId) {
    throw new Error("the tests need the suite's database: run them with `npm test` (or `npm test -- FILE...`)");
  }
  return { server, template, runId };
}

let shared: Promise<{ db: Db; url: string }> | null = null;

function sharedDb(): Promise<{ db: Db; url: string }> {
  if (shared === null) {
    const opened = openOwnDatabase('template', 20);
    shared = opened;
    closeDatabaseAtEnd(async () => (await opened).db.close());
  }
  return shared;
}

/** The process's test database, migrated; closed and dropped when the test file ends. */
export async function testDb(): Promise<Db> {
  return (await sharedDb()).db;
}

/** The URL of the process's test database (for a service process of its own to share it). */
export async function testDatabaseUrl(): Promise<string> {
  return (await sharedDb()).url;
}

/**
 * The process's database as a second instance of the service sees it: another pool on the same
 * database (commits reach it through NOTIFY, as between instances), closed at the file's end.
 */
export async function otherInstanceDb(): Promise<Db> {
  const other = await openDb({ url: await testDatabaseUrl(), poolSize: 5 });
  closeAtEnd(() => other.close());
  return other;
}

/** A fresh database of its own (for migration tests), unmigrated; closed with the test `t` when
 * given, else the caller closes it. */
export async function freshDb(opts: { t?: Teardown } = {}): Promise<Db> {
  const { db } = await openOwnDatabase('empty', 10);
  if (opts.t !== undefined) closeWith(opts.t, () => db.close());
  return db;
}

async function openOwnDatabase(from: 'template' | 'empty', poolSize: number): Promise<{ db: Db; url: string }> {
  const { server, template, runId } = suite();
  const name = `storeops_t_${runId}_${crypto.randomBytes(5).toString('hex')}`;
  await adminQuery(server, from === 'template' ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name} TEMPLATE template0`);
  const url = databaseUrl(server, name);
  const db = await openDb({ url, poolSize });
  const close = db.close.bind(db);
  return {
    url,
    db: {
      ...db,
      close: async () => {
        await close();
        await adminQuery(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    },
  };
}
