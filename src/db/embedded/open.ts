// The embedded database as the service and the command-line tools open it. The service owns
// DATA_DIR: it starts the server and stops it when it closes; a second service on the same
// DATA_DIR is refused, naming the first. A tool (provision, migrate, backup, secret-token) run
// while the service runs goes through the running server; run alone, it starts the server for
// its own work and stops it after.
import fs from 'node:fs';
import path from 'node:path';
import { openDb, type Db } from '../db.ts';
import { DataDirLockedError, lockDataDir } from '../data-dir-lock.ts';
import { embeddedUrl, startEmbeddedServer, type EmbeddedServerOptions } from './server.ts';
import { DatabaseStartError } from '../start-error.ts';

/** The data directory cannot be used as it is: one line for the operator. */
export class DataDirError extends DatabaseStartError {}

export interface EmbeddedOpenOptions {
  /** A tool: use the server of a running service instead of refusing. */
  attach?: boolean;
  onLine?: (line: string) => void;
  settings?: EmbeddedServerOptions['settings'];
  poolSize?: number;
}

/** Where an earlier release kept its embedded database (PGlite). */
export function pgliteDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

export function holdsPgliteData(dataDir: string): boolean {
  return fs.existsSync(path.join(pgliteDir(dataDir), 'PG_VERSION'));
}

function prepareDataDir(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (err) {
    throw new DataDirError(
      `DATA_DIR ${dataDir} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give this user that directory, or set DATA_DIR to one it can write`,
    );
  }
  if (holdsPgliteData(dataDir)) {
    throw new DataDirError(
      `DATA_DIR ${dataDir} holds the embedded database of an earlier release (PGlite, in ${pgliteDir(dataDir)}); nothing was changed. ` +
        `Convert it once with \`npm run migrate-data -- ${dataDir}\`, then start again`,
    );
  }
}

/** Runs `then` after the database handle closes. */
function afterClose(db: Db, then: () => Promise<void>): Db {
  return {
    ...db,
    close: async () => {
      try {
        await db.close();
      } finally {
        await then();
      }
    },
  };
}

export async function openEmbeddedDb(dataDir: string, opts: EmbeddedOpenOptions = {}): Promise<Db> {
  prepareDataDir(dataDir);
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirLockedError) || opts.attach !== true) throw err;
    const db = await openDb({ url: embeddedUrl(dataDir), poolSize: opts.poolSize ?? 2 });
    try {
      await db.ping();
    } catch (cause) {
      await db.close();
      throw new DataDirError(`DATA_DIR ${dataDir} is in use by storeops process ${err.pid}, and its database does not answer: ${(cause as Error).message}`);
    }
    return db;
  }
  const start = () => startEmbeddedServer({ dataDir, ...(opts.settings ? { settings: opts.settings } : {}), ...(opts.onLine ? { onLine: opts.onLine } : {}) });
  try {
    let server = await start();
    let closing = false;
    let wake = () => {};
    // A server that ends unasked (killed, out of memory) is started again, with a growing pause
    // between attempts; requests meanwhile are answered 503 and the pool reconnects to the same socket.
    const keepRunning = async (): Promise<void> => {
      for (let pause = 1_000; ; pause = Math.min(pause * 2, 30_000)) {
        await server.ended;
        if (closing) return;
        opts.onLine?.(`the embedded PostgreSQL server (pid ${server.pid}) ended unexpectedly; starting it again`);
        try {
          server = await start();
          pause = 1_000;
          if (closing) await server.stop();
        } catch (err) {
          opts.onLine?.(`the embedded PostgreSQL server could not be started again: ${(err as Error).message}; next attempt in ${pause / 1000} s`);
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, pause).unref();
          });
          if (closing) return;
        }
      }
    };
    const watching = keepRunning();
    try {
      const db = await openDb({ url: server.url, ...(opts.poolSize ? { poolSize: opts.poolSize } : {}) });
      return afterClose(db, async () => {
        closing = true;
        wake();
        await server.stop();
        await watching;
        release();
      });
    } catch (err) {
      closing = true;
      await server.stop();
      throw err;
    }
  } catch (err) {
    release();
    throw err;
  }
}
