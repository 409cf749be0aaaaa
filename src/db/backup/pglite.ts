// An earlier release's embedded database (PGlite, PostgreSQL in WebAssembly, in DATA_DIR/pglite),
// opened as that release opened it, behind the Db interface, for `npm run migrate-data` to dump. Only
// the converter loads PGlite (a dynamic import: the service never does).
import pg from 'pg';
import { changeHandle, queryable, typeParsers, type Db, type Tx } from '../db.ts';
import { SignalHub } from '../signals.ts';

/**
 * Opens the PGlite database in `dir` (made if missing: the tests make one as the last release
 * did). PGlite is one connection, used here by one node-postgres client; its queries and
 * transactions run one at a time, in the order they were asked for.
 */
export async function openPgliteDb(dir: string): Promise<Db> {
  const [{ PGlite }, { createPgConfig }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/node-postgres')]);
  // The last release's settings: 32 MB of shared buffers instead of PGlite's 128 MB.
  const pglite = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'] });
  const client = new pg.Client({ ...(createPgConfig(pglite) as unknown as pg.ClientConfig), types: typeParsers });
  try {
    await client.connect();
    await client.query("SET TIME ZONE 'UTC'");
  } catch (err) {
    await pglite.close();
    throw err;
  }
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = turn.then(fn, fn);
    turn = run.catch(() => {});
    return run;
  };
  const query = async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => (await client.query(text, params as unknown[] | undefined)).rows as R[];
  const hub = new SignalHub();
  const tx = <T>(fn: (q: Tx) => Promise<T>): Promise<T> =>
    inTurn(async () => {
      await client.query('BEGIN');
      try {
        const result = await fn(changeHandle(query, () => {}));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    });
  return {
    ...queryable((text, params) => inTurn(() => query(text, params))),
    tx,
    statement: (fn) => inTurn(() => fn(changeHandle(query, () => {}))),
    commits: hub,
    ping: async () => void (await inTurn(() => query('SELECT 1'))),
    close: async () => {
      await turn;
      await client.end().catch(() => {});
      await pglite.close();
    },
  };
}
