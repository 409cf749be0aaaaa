// npm run migrate: applies pending migrations to the configured database and exits.
// Safe when several instances (or this and a starting service) migrate at once.
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openConfiguredDb } from '../db/open.ts';

try {
  const config = loadConfig(process.env);
  const db = await openConfiguredDb(config, { attach: true });
  try {
    const applied = await migrate(db);
    console.log(applied.length === 0 ? 'storeops: the database is up to date' : `storeops: applied ${applied.join(', ')}`);
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : (err as Error).message}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
