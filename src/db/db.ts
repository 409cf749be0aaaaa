// The database handle: a node-postgres pool on PostgreSQL (the embedded server or DATABASE_URL's),
// with transactions that signal their commits to the rest of the service and to other instances.
import pg from 'pg';
import { APPLICATION_NAME } from '../version.ts';
import { pgTimestamptzToIso } from './timestamps.ts';
import { postgresNotifier } from './notify.ts';
import { SignalHub, type CommitSignals, type Signal } from './signals.ts';
import type { Sql } from './sql.ts';

export type { CommitSignals, Signal } from './signals.ts';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<R = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a statement built with `sql`; in a change, its commit wakes the fragments' signals. */
  run<R = Row>(statement: Sql): Promise<R[]>;
}

type QueryFn = Queryable['query'];

/** A Queryable over `query`: statements built with `sql` are numbered and run through it; their
 * signals go to `signal` (a change's), and outside a change a statement that signals is refused. */
export function queryable(query: QueryFn, signal?: (s: Signal) => void): Queryable {
  return {
    query,
    async run<R>(statement: Sql): Promise<R[]> {
      if (statement.signals.size > 0) {
        if (signal === undefined) throw new Error('a statement that wakes listeners runs in db.statement() or db.tx()');
        statement.signals.forEach(signal);
      }
      const { text, values } = statement.toQuery();
      return query<R>(text, values);
    },
  };
}

/** A change's handle over `query`, its signals collected by `signal`. */
export function changeHandle(query: QueryFn, signal: (s: Signal) => void): Tx {
  return { ...queryable(query, signal), signal };
}

/** A handle on a change being made: its queries, and what its commit wakes. */
export interface Tx extends Queryable {
  /** Once this change commits, wake the listeners of `signal` (on every instance). */
  signal(signal: Signal): void;
}

export interface Db extends Queryable {
  /** Runs fn in one transaction; every query of fn must go through the handle it is given. */
  tx<T>(fn: (q: Tx) => Promise<T>): Promise<T>;
  /**
   * A change made by one statement, atomic on its own: no BEGIN and COMMIT round trips. fn may run
   * one query; its signals are sent when fn is done, if that query succeeded.
   */
  statement<T>(fn: (q: Tx) => Promise<T>): Promise<T>;
  /** Wakes listeners after commits that signalled (this instance's and, on PostgreSQL, the others'). */
  readonly commits: CommitSignals;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DbTarget {
  url: string;
  poolSize?: number;
  /** A search_path of its own. */
  schema?: string;
}

/** node-postgres's error when query_timeout passes without an answer. */
const QUERY_READ_TIMEOUT = 'Query read timeout';
/** Longer than statement_timeout, so a live server reports its own error first; it bounds a
 * request on a connection whose server stopped answering (paused, or behind a network that drops
 * packets instead of refusing them), which would otherwise wait forever. */
const QUERY_TIMEOUT_MS = 20_000;

const TIMESTAMPTZ = 1184;
const INT8 = 20;
const NUMERIC = 1700;

/** The wire formats of results (timestamptz as the contract's string, bigint and numeric as numbers). */
export const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ) return pgTimestamptzToIso;
    if (oid === INT8 || oid === NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** How many distinct statements one handle prepares; SQL built at run time past it runs unprepared. */
const MAX_PREPARED = 500;

/**
 * Names for prepared statements, one per distinct parameterized SQL text. PostgreSQL then parses
 * and plans a statement once per connection instead of on every call: the benchmark's profile
 * showed parsing and planning as most of the database's CPU for the short queries a request makes.
 * Only parameterized texts are named: those are single statements (migrations and provisioning
 * scripts are not), and their SQL is written in the source, so the set is small and fixed.
 */
function statementNames(): (text: string, params: readonly unknown[] | undefined) => string | undefined {
  const names = new Map<string, string>();
  return (text, params) => {
    if (params === undefined || params.length === 0) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) {
      name = `s${names.size}`;
      names.set(text, name);
    }
    return name;
  };
}

function wrap(client: pg.Pool | pg.PoolClient, nameOf: ReturnType<typeof statementNames>): Queryable {
  return queryable(async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
    const name = nameOf(text, params);
    const result = await client.query(name === undefined ? { text, values: params as unknown[] | undefined } : { name, text, values: params as unknown[] });
    return result.rows as R[];
  });
}

function fromPool(pool: pg.Pool, hub: SignalHub, hooks: { beforeEnd: () => Promise<void> }): Db {
  // An idle client that loses its server emits 'error' on the pool; without a listener that would
  // crash the process. The next query gets a fresh connection (or a 503 while the server is down).
  pool.on('error', () => {});
  const nameOf = statementNames();
  const root = wrap(pool, nameOf);
  return {
    query: root.query,
    run: root.run,
    commits: hub,
    async statement<T>(fn: (q: Tx) => Promise<T>): Promise<T> {
      const signals = new Set<Signal>();
      let ran = false;
      let committed = false;
      try {
        const query = async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
          if (ran) throw new Error('db.statement() runs one query; use db.tx() for more');
          ran = true;
          const rows = await root.query<R>(text, params);
          committed = true;
          return rows;
        };
        return await fn(changeHandle(query, (s) => void signals.add(s)));
      } finally {
        // Signals are read once fn is done, so it may signal after seeing what its statement wrote;
        // a failure of fn after the statement does not undo it.
        if (committed) hub.committed(signals);
      }
    },
    async tx<T>(fn: (q: Tx) => Promise<T>): Promise<T> {
      const signals = new Set<Signal>();
      let committed = false;
      const client = await pool.connect();
      let broken = false;
      // While checked out a client has no pool listener: a server that dies mid-transaction would
      // make its 'error' event unhandled and end the process. The pending query rejects anyway
      // (a 503); the client is then discarded instead of going back to the pool.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const q = wrap(client, nameOf);
        const result = await fn(changeHandle(q.query, (s) => void signals.add(s)));
        await client.query('COMMIT');
        committed = true;
        return result;
      } catch (err) {
        // A connection that died, or whose server stopped answering, is not asked to roll back (a
        // ROLLBACK queued behind a timed-out query would wait as long again): it is closed, and
        // the server rolls back when it sees it go.
        if (broken || (err as Error)?.message === QUERY_READ_TIMEOUT) {
          broken = true;
          throw err;
        }
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw err;
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
        if (committed) hub.committed(signals);
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await hooks.beforeEnd();
      await pool.end();
    },
  };
}

export async function openDb(target: DbTarget): Promise<Db> {
  // Generic plans (plan_cache_mode=force_generic_plan) for the statements prepared on a
  // connection (statementNames above): under PostgreSQL's default, auto, L7 is planned again on
  // every call, 0.9 ms a run against 0.26 ms on its generic plan, which finds the cabinet by key as
  // well (over a million rows of history; docs/performance.md, "Decisions").
  const connection = {
    connectionString: target.url,
    connectionTimeoutMillis: 5_000,
    application_name: APPLICATION_NAME,
    options: `-c TimeZone=UTC -c plan_cache_mode=force_generic_plan${target.schema ? ` -c search_path=${target.schema}` : ''}`,
    types: typeParsers,
  };
  const pool = new pg.Pool({ ...connection, max: target.poolSize ?? 10, statement_timeout: 15_000, query_timeout: QUERY_TIMEOUT_MS });
  const hub = new SignalHub(target.schema ?? 'public');
  const notifier = postgresNotifier(pool, connection, hub);
  hub.connect({ send: notifier.send, listen: notifier.listen });
  return fromPool(pool, hub, { beforeEnd: () => notifier.close() });
}
