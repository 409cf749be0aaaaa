// The database the configuration names: PostgreSQL at DATABASE_URL, else PGlite in DATA_DIR.
import type { Config } from '../config.ts';
import { openDb, type Db } from './db.ts';

export function openConfiguredDb(config: Config): Promise<Db> {
  return openDb(config.databaseUrl !== null ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: config.dataDir });
}
