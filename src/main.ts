// The process: read the configuration, open the database, migrate, provision, serve; close
// gracefully on SIGTERM/SIGINT.
import fs from 'node:fs';
import { buildApp, type App } from './app.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import type { Db } from './db/db.ts';
import { openConfiguredDb } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { resolveSecretToken } from './http/secret-token.ts';
import { Scheduler } from './jobs/scheduler.ts';
import { DeviceGateway } from './devices/gateway.ts';
import { applyProvisioning, ProvisioningError } from './provisioning/apply.ts';
import { createSpeechSynthesizer } from './radio/speech/speech.ts';

function fail(message: string): never {
  console.error(`storeops: ${message}`);
  process.exit(2);
}

async function start(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
  let db: Db;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) fail(err.message);
    throw err;
  }
  await migrate(db);
  const secret = await resolveSecretToken(db, config.secretToken);
  if (secret.generated !== null) {
    // Printed once, on the start that made it; only its digest is kept.
    console.log(
      `\n  SECRET_TOKEN was not set, so one was generated. It is shown this once; keep it:\n\n    ${secret.generated}\n\n` +
        '  Pass it as ?secret_token=... to the locker operations, or set SECRET_TOKEN to use your own.\n',
    );
  }
  if (config.provisionFile !== null) {
    try {
      const input: unknown = JSON.parse(fs.readFileSync(config.provisionFile, 'utf8'));
      await applyProvisioning(db, systemClock, input);
    } catch (err) {
      await db.close();
      if (err instanceof ProvisioningError || err instanceof SyntaxError || (err as NodeJS.ErrnoException).code === 'ENOENT') {
        fail(`PROVISION_FILE ${config.provisionFile}: ${(err as Error).message}`);
      }
      throw err;
    }
  }

  let app: App | undefined = undefined;
  const scheduler = new Scheduler({
    db,
    clock: systemClock,
    log: { error: (obj, msg) => app?.log.error(obj, msg) },
    afterCommit: () => devices.notify(), // a delayed close reaches the locker without waiting for a poll
  });
  const deviceLog = (level: 'debug' | 'info' | 'warn' | 'error') => (obj: object, msg: string) => app?.log[level]({ ...obj, component: 'devices' }, msg);
  const devices = new DeviceGateway({
    config, db, clock: systemClock,
    log: { debug: deviceLog('debug'), info: deviceLog('info'), warn: deviceLog('warn'), error: deviceLog('error') },
  });
  const speech = createSpeechSynthesizer({ workers: config.speechWorkers });
  app = await buildApp({ config, db, clock: systemClock, scheduler, devices, secretDigest: secret.digest, speech });
  const serving = app;

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    serving.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      serving.log.error('shutdown took too long, exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    await serving.close(); // stops accepting, lets in-flight requests finish
    await scheduler.stop();
    await devices.stop(); // the last queued messages are published, the last acks recorded
    await speech.close();
    await db.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  // Warm engines before the first request, so it is not the slow one.
  try {
    await speech.ready();
  } catch (err) {
    await speech.close();
    await db.close();
    fail((err as Error).message);
  }
  try {
    await devices.start();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`MQTT_PORT ${config.mqttPort} is already in use (set MQTT_PORT, or MQTT_URL for an external broker)`);
    throw err;
  }
  await serving.listen({ port: config.port, host: config.host });
  scheduler.start();
}

start().catch((err: unknown) => {
  console.error('storeops: failed to start:', err);
  process.exit(1);
});
