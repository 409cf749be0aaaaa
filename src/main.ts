// The process: read the configuration, compose the service, serve; close gracefully on SIGTERM/SIGINT
// (closing the app is the whole shutdown: it stops the scheduler, the event subscribers, the device
// gateway, the speech engines and the database, in that order).
import { compose, StartupError, type Service } from './compose.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';

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

async function start(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
  let service: Service;
  try {
    service = await compose({ config, onSecretGenerated: printGeneratedSecret });
  } catch (err) {
    if (err instanceof StartupError) fail(err.message);
    throw err;
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

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close().catch(() => {});
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && (err as { port?: number }).port === config.mqttPort) {
      fail(`MQTT_PORT ${config.mqttPort} is already in use (set MQTT_PORT, or MQTT_URL for an external broker)`);
    }
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`PORT ${config.port} is already in use`);
    fail((err as Error).message);
  }
}

start().catch((err: unknown) => {
  console.error('storeops: failed to start:', err);
  process.exit(1);
});
