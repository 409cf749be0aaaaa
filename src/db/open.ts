// The database the configuration names: PostgreSQL at DATABASE_URL, else the embedded server in
// DATA_DIR (embedded/open.ts).
// A start waits up to DATABASE_WAIT_SECONDS for PostgreSQL to answer (a compose setup starts the
// database late), saying so once per attempt; what cannot get better by waiting (a database that
// does not exist, a refused password) stops the start at once, in one line naming DATABASE_URL.
import type { Config } from '../config.ts';
import { openDb, type Db } from './db.ts';
import { openEmbeddedDb } from './embedded/open.ts';
import { DatabaseStartError } from './start-error.ts';

export { DatabaseStartError };

const RETRY_MS = 1_000;

/** host:port/database of a postgres:// URL, without its credentials. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

interface PgError {
  code?: string;
  message?: string;
}

/** Why the server did not answer, in a few words; null when waiting cannot help. */
function transientCause(err: PgError): string | null {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOENT':
      return 'no server on its socket';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve (yet)';
    case 'ETIMEDOUT':
    case 'ECONNRESET':
      return 'no answer';
    case '57P03':
      return 'the database system is starting up';
  }
  if (/timeout|terminated/i.test(err.message ?? '')) return 'no answer';
  return null;
}

function permanentMessage(err: PgError, where: string, url: string): string {
  const name = (() => {
    try {
      return decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
    } catch {
      return '?';
    }
  })();
  switch (err.code) {
    case '3D000':
      return `the database "${name}" does not exist on ${where.replace(/\/.*$/, '')} (DATABASE_URL): create it (createdb ${name}) or fix DATABASE_URL`;
    case '28P01':
    case '28000':
      return `the database at ${where} refused the user or password of DATABASE_URL: ${err.message ?? err.code}`;
  }
  return `the database at ${where} (DATABASE_URL) refused the connection: ${err.message ?? String(err.code)}`;
}

export interface OpenOptions {
  /** One line per failed attempt while waiting for the database; on the embedded server, what its start did. */
  onWait?: (line: string) => void;
  /** A command-line tool: on the embedded server, go through the running service's server. */
  attach?: boolean;
  sleep?: (ms: number) => Promise<void>;
}

export async function openConfiguredDb(config: Config, opts: OpenOptions = {}): Promise<Db> {
  if (config.databaseUrl === null) {
    return openEmbeddedDb(config.dataDir, { attach: opts.attach === true, ...(opts.onWait ? { onLine: opts.onWait } : {}) });
  }
  const url = config.databaseUrl;
  const where = describeDatabaseUrl(url);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = Date.now() + config.databaseWaitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    const db = await openDb({ url });
    try {
      await db.ping();
      return db;
    } catch (err) {
      await db.close().catch(() => {});
      const cause = transientCause(err as PgError);
      if (cause === null) throw new DatabaseStartError(permanentMessage(err as PgError, where, url));
      const left = Math.ceil((deadline - Date.now()) / 1000);
      if (left <= 0) {
        throw new DatabaseStartError(
          `the database at ${where} (DATABASE_URL) is not reachable: ${cause}; waited ${config.databaseWaitSeconds} s (DATABASE_WAIT_SECONDS)`,
        );
      }
      opts.onWait?.(`waiting for the database at ${where} (DATABASE_URL): ${cause}; attempt ${attempt}, ${left} s left (DATABASE_WAIT_SECONDS)`);
      await sleep(RETRY_MS);
    }
  }
}
