// npm run secret-token: where the secret_token of the locker operations comes from;
// `-- --rotate` replaces a generated one with a new one, printed this once (the old one is refused
// from the next start of the service on). With SECRET_TOKEN set there is nothing stored to rotate.
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { describeDatabaseUrl, openConfiguredDb } from '../db/open.ts';
import { resolveSecretToken, rotateSecretToken } from '../http/secret-token.ts';

try {
  const config = loadConfig(process.env);
  const rotate = process.argv.includes('--rotate');
  if (config.secretToken !== null) {
    console.log(`storeops: SECRET_TOKEN is set in the environment: it is the token${rotate ? '; change it there to rotate it' : ''}.`);
    process.exitCode = rotate ? 2 : 0;
  } else {
    const db = await openConfiguredDb(config, { attach: true });
    const where = config.databaseUrl === null ? `the embedded database in ${config.dataDir}` : `the database at ${describeDatabaseUrl(config.databaseUrl)}`;
    try {
      await migrate(db);
      if (rotate) {
        const token = await rotateSecretToken(db);
        console.log(
          `\n  A new secret token was made and stored (hashed) in ${where}. It is shown this once; keep it:\n\n    ${token}\n\n` +
            '  The old token is refused from the next start of the service on: restart every running instance.\n',
        );
      } else {
        const found = await resolveSecretToken(db, null);
        if (found.generated !== null) {
          console.log(`\n  No token was stored, so one was generated. It is shown this once; keep it:\n\n    ${found.generated}\n`);
        } else {
          console.log(
            `storeops: the secret token is the one generated on ${found.createdAt ?? 'an earlier start'} and kept (hashed) in ${where}; it cannot be shown again.`,
          );
          console.log('storeops: make a new one with `npm run secret-token -- --rotate`, or set SECRET_TOKEN to use your own.');
        }
      }
    } finally {
      await db.close();
    }
  }
} catch (err) {
  const message = err instanceof ConfigError ? `configuration error: ${err.message}` : (err as Error).message;
  console.error(`storeops: ${message}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
