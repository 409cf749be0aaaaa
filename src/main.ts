// The process: read the configuration, compose the service, serve; close gracefully on SIGTERM/SIGINT
// (closing the app is the whole shutdown: it stops the scheduler, the event subscribers, the device
// gateway, the speech engines and the database, in that order).
import { compose, StartupError, type Service } from './compose.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { isDatabaseUnavailable } from './db/errors.ts';
import { describeSummary } from './provisioning/errors.ts';
import { EXAMPLE_SECRET_PROBLEM } from './example-secrets.ts';

function fail(message: string): never {
  console.error(`storeops: ${message}`);
  process.exit(2);
}

function printGeneratedSecret(secret: string): void {
  // Printed once, on the start that made it; only its digest is kept.
  console.log(
    `\n  SECRET_TOKEN was not set, so one was generated. It is shown this once; keep it:\n\n    ${secret}\n\n` +
      '  Pass it as ?secret_token=... to the locker operations, or set SECRET_TOKEN to use your own.\n',
  );
}

function printStoredSecret(config: Config, createdAt: string | null): void {
  const where = config.databaseUrl === null ? `the embedded database in ${config.dataDir}` : 'the database';
  console.log(
    `storeops: SECRET_TOKEN is not set: the locker operations take the token generated on ${createdAt ?? 'an earlier start'} ` +
      `(printed then, kept only hashed in ${where}). Set SECRET_TOKEN to use your own, or make a new one with \`npm run secret-token -- --rotate\`.`,
  );
}

/** A failure of the start in one line: what went wrong and, where it is one, the variable to look at. */
function startFailure(err: unknown, config: Config): string {
  const e = err as NodeJS.ErrnoException & { port?: number };
  if (e.code === 'EADDRINUSE' && e.port === config.mqttPort && config.mqttUrl === null) {
    return `MQTT_PORT ${config.mqttPort} is already in use by another program (set MQTT_PORT, or MQTT_URL for an external broker)`;
  }
  if (e.code === 'EADDRINUSE') return `PORT ${config.port} is already in use by another program (stop it, or set PORT)`;
  if (e.code === 'EACCES') return `PORT ${config.port} (or MQTT_PORT ${config.mqttPort}) needs privileges this process does not have: use a port above 1023`;
  if (e.code === 'EADDRNOTAVAIL') return `HOST ${config.host} is not an address of this machine (set HOST, e.g. 0.0.0.0)`;
  if (isDatabaseUnavailable(err))
    return `the database stopped answering during the start (${config.databaseUrl === null ? 'DATA_DIR' : 'DATABASE_URL'}): ${e.message}`;
  return e.message ?? String(err);
}

/** Whether a failure of the start shows its stack (LOG_LEVEL debug or trace). */
let verbose = false;

async function start(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
    verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
  for (const variable of config.exampleSecrets) console.error(`storeops: warning: ${variable} ${EXAMPLE_SECRET_PROBLEM}`);
  let service: Service;
  try {
    service = await compose({
      config,
      onSecretGenerated: printGeneratedSecret,
      onSecretStored: (createdAt) => printStoredSecret(config, createdAt),
      onProvisioned: (file, summary) => {
        console.log(`storeops: applied ${file}: ${describeSummary(summary)}`);
        // Shown this once (only their digests are kept): print each as a QR code of exactly this text.
        for (const c of summary.scan_codes ?? []) console.log(`storeops: new scan code of ${c.kind} ${c.id}: ${c.scan_code}`);
        for (const field of summary.example_secrets ?? []) console.error(`storeops: warning: ${file} ${field} ${EXAMPLE_SECRET_PROBLEM}`);
      },
      onDatabaseWait: (line) => console.error(`storeops: ${line}`),
    });
  } catch (err) {
    if (err instanceof StartupError) fail(err.message);
    fail(startFailure(err, config));
  }
  const { app } = service;

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long, exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    await app.close(); // stops accepting, lets in-flight requests finish, then stops everything else
    clearTimeout(force);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close().catch(() => {});
    fail(startFailure(err, config));
  }
  // One line whatever LOG_LEVEL is: where to point a browser (with PORT=0, the port chosen).
  console.log(`storeops: ready at ${address}: the console is at ${address}/console`);
}

start().catch((err: unknown) => {
  // One line; the stack only when asked for (LOG_LEVEL=debug or trace).
  console.error(`storeops: failed to start: ${verbose ? ((err as Error).stack ?? String(err)) : ((err as Error).message ?? String(err))}`);
  process.exit(1);
});
