// The whole service built from its configuration: database, clock, speech, device gateway, job
// scheduler with every feature's job kinds, event subscribers, and the HTTP app whose lifecycle
// starts and stops them all (onReady / onClose). main.ts, the tests and the benchmark use it.
import fs from 'node:fs';
import { buildApp, type App } from './app.ts';
import { auditModule } from './audit/module.ts';
import { cfhModule } from './cfh/module.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { consoleModule } from './console/module.ts';
import { staffModule } from './staff/module.ts';
import { sessionTag } from './console/live.ts';
import { peopleModule } from './people/module.ts';
import { lowPriorityHasher } from './people/low-priority-hasher.ts';
import type { Db } from './db/db.ts';
import { migrate } from './db/migrate.ts';
import { DatabaseStartError, openConfiguredDb } from './db/open.ts';
import { DeviceGateway, type GatewayListeners } from './devices/gateway.ts';
import { DeviceHealth } from './devices/health.ts';
import { deviceHealthModule } from './devices/health-module.ts';
import { EventSubscribers } from './events/subscribers.ts';
import type { FeatureModule } from './feature-module.ts';
import { apiTokenLookup, type ApiTokens } from './http/auth.ts';
import type { FailureLimit } from './http/rate-limit.ts';
import { resolveSecretToken } from './http/secret-token.ts';
import { Scheduler } from './jobs/scheduler.ts';
import { LiveFeed } from './live/feed.ts';
import { LiveStreams } from './live/streams.ts';
import { lockersModule } from './lockers/module.ts';
import { locationsModule } from './locations/module.ts';
import { componentLogger, createLogger, type ServiceLogger } from './logger.ts';
import { ServiceMetrics } from './metrics/metrics.ts';
import { applyProvisioning, ProvisioningError, type ProvisioningSummary } from './provisioning/apply.ts';
import { radioModule } from './radio/module.ts';
import { createSpeechSynthesizer, lazySpeechSynthesizer, type SpeechSynthesizer } from './radio/speech/speech.ts';
import { ReportGate } from './reports/gate.ts';
import { reportsModule } from './reports/module.ts';
import { Retention } from './retention/retention.ts';
import type { WebhookDeliverer } from './webhooks/deliverer.ts';
import { webhooksModule } from './webhooks/module.ts';

export interface ComposeOptions {
  config: Config;
  clock?: Clock;
  /** An open, migrated database, shared: not closed with the app. Default: the configured one,
   * opened, migrated, provisioned from PROVISION_FILE, and closed with the app. */
  db?: Db;
  /** SHA-256 of secret_token; default: SECRET_TOKEN, or the one generated and kept in the database. */
  secretDigest?: string;
  /** Called with a secret_token generated on this start: printed once, never logged. */
  onSecretGenerated?: (secret: string) => void;
  /** Called when SECRET_TOKEN is unset and the token in force is one generated on an earlier start. */
  onSecretStored?: (createdAt: string | null) => void;
  /** Called with what PROVISION_FILE applied at this start (counts by kind). */
  onProvisioned?: (file: string, summary: ProvisioningSummary) => void;
  /** A line per attempt while the start waits for DATABASE_URL's server. */
  onDatabaseWait?: (line: string) => void;
  /** Shared speech engines, neither warmed nor closed by this app. Default: its own. */
  speech?: SpeechSynthesizer;
  /** A shared device gateway, neither started nor stopped by this app (the tests' apps share one),
   * given where this app hears of devices. Default: its own, built with them. */
  devices?: (listeners: GatewayListeners) => DeviceGateway;
  failureLimit?: FailureLimit;
  /** The service's logger; default: one made from LOG_LEVEL (logger.ts). */
  logger?: ServiceLogger;
  /** Tests: the scheduler, the event subscribers and the webhook deliverer run only when told
   * (runDue, runPending, webhooks.runDue). */
  manualJobs?: boolean;
}

export interface Service {
  app: App;
  config: Config;
  db: Db;
  clock: Clock;
  scheduler: Scheduler;
  devices: DeviceGateway;
  events: EventSubscribers;
  /** Sends webhook deliveries; `await webhooks.runDue()` attempts what is due now. */
  webhooks: WebhookDeliverer;
  /** Device health; `await health.flush()` writes the last-seen times it holds. */
  health: DeviceHealth;
  speech: SpeechSynthesizer;
  metrics: ServiceMetrics;
  /** Deletes what is older than RETENTION_DAYS; `await retention.runNow()` sweeps now. */
  retention: Retention;
  /** What open streams hear of committed changes; `await feed.readNow()` reads the log now. */
  feed: LiveFeed;
  /** The open Server-Sent Events streams of this instance. */
  live: LiveStreams;
  /** The bearer-token lookup every feature's routes share (one cache). */
  apiTokens: ApiTokens;
}

/** A start that cannot go on, with a message for the operator. */
export class StartupError extends Error {}

export async function compose(opts: ComposeOptions): Promise<Service> {
  const { config } = opts;
  const clock = opts.clock ?? systemClock;
  const ownsDb = opts.db === undefined;
  const db = opts.db ?? (await openOwnDb(config, opts.onDatabaseWait));
  try {
    const secretDigest = opts.secretDigest ?? (await prepareDb(db, config, clock, opts));
    return await assemble(opts, { db, clock, secretDigest, ownsDb });
  } catch (err) {
    if (ownsDb) await db.close();
    throw err instanceof DatabaseStartError ? new StartupError(err.message) : err;
  }
}

async function openOwnDb(config: Config, onWait?: (line: string) => void): Promise<Db> {
  try {
    return await openConfiguredDb(config, onWait === undefined ? {} : { onWait });
  } catch (err) {
    if (err instanceof DatabaseStartError) throw new StartupError(err.message);
    throw err;
  }
}

/** Migrations, the secret_token, and PROVISION_FILE: what a database needs before serving. */
async function prepareDb(
  db: Db,
  config: Config,
  clock: Clock,
  notify: Pick<ComposeOptions, 'onSecretGenerated' | 'onSecretStored' | 'onProvisioned'>,
): Promise<string> {
  await migrate(db);
  const secret = await resolveSecretToken(db, config.secretToken);
  if (secret.generated !== null) notify.onSecretGenerated?.(secret.generated);
  if (secret.source === 'stored') notify.onSecretStored?.(secret.createdAt);
  if (config.provisionFile !== null) {
    try {
      const summary = await applyProvisioning(db, clock, JSON.parse(fs.readFileSync(config.provisionFile, 'utf8')), {
        source: config.provisionFile,
        production: config.production,
      });
      notify.onProvisioned?.(config.provisionFile, summary);
    } catch (err) {
      if (err instanceof ProvisioningError || err instanceof SyntaxError || (err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new StartupError(`PROVISION_FILE ${config.provisionFile}: ${(err as Error).message}`);
      }
      throw err;
    }
  }
  return secret.digest;
}

async function assemble(opts: ComposeOptions, parts: { db: Db; clock: Clock; secretDigest: string; ownsDb: boolean }): Promise<Service> {
  const { config } = opts;
  const { db, clock } = parts;
  const logger = opts.logger ?? createLogger(config);
  const log = (component: string) => componentLogger(logger, component);
  const metrics = new ServiceMetrics();
  const observeSynthesis = (seconds: number) => metrics.observeSynthesis(seconds);
  const apiTokens = apiTokenLookup(db, clock);
  const speechLog = log('speech');
  // On the embedded path (a small store box) the engines start on first use: about 115 MB less while
  // no announcement has been made. With PostgreSQL they warm at start, so the first is not the slow one.
  const warmSpeech = config.databaseUrl !== null;
  const makeSpeech = () =>
    createSpeechSynthesizer({
      workers: config.speechWorkers,
      onEngineFailed: (engine, err) => speechLog.warn({ engine, err }, 'speech engine cannot run; using the next one'),
    });
  const speech = opts.speech ?? (warmSpeech ? makeSpeech() : lazySpeechSynthesizer(makeSpeech));
  const feed = new LiveFeed({ db, log: log('live') });
  const live = new LiveStreams({ feed, log: log('live') });

  const health = new DeviceHealth({ db, clock, offlineSeconds: config.deviceOfflineSeconds, log: log('health') });
  const cfh = cfhModule({ db, clock, config, apiTokens, live });
  const radio = radioModule({ db, clock, config, speech, apiTokens, observeSynthesis, cfh, log: log('radio') });
  const listeners: GatewayListeners = { presence: health, heard: radio.heard };
  const devices = opts.devices?.(listeners) ?? new DeviceGateway({ config, db, clock, log: log('devices'), listeners });
  const webhooks = webhooksModule({ db, clock, config, apiTokens, log: log('webhooks') });
  const hasher = lowPriorityHasher();
  const people = peopleModule({ db, clock, config, apiTokens, hasher, sessionEnded: (sessionId) => live.endTagged(sessionTag(sessionId)) });
  const reportGate = new ReportGate();
  const modules: FeatureModule[] = [
    lockersModule({
      db,
      clock,
      secretDigest: parts.secretDigest,
      deviceSeen: (lockerId) => devices.seen({ kind: 'locker', lockerId }),
      apiTokens,
      publicBaseUrl: config.publicBaseUrl,
    }),
    locationsModule({ db, clock, apiTokens, publicBaseUrl: config.publicBaseUrl }),
    deviceHealthModule(health, { db, clock, offlineSeconds: config.deviceOfflineSeconds, apiTokens }),
    cfh,
    radio,
    webhooks,
    reportsModule({ db, clock, apiTokens, reportGate }),
    consoleModule({ db, clock, config, speech, live, observeSynthesis, storeDevices: people.storeDevices, reportGate }),
    staffModule({ db, clock, config, speech, live, observeSynthesis, storeDevices: people.storeDevices }),
    people,
    auditModule({ db, clock, config, apiTokens }),
  ];

  const scheduler = new Scheduler({ db, clock, log: log('jobs') });
  const events = new EventSubscribers({ db, log: log('events') });
  for (const module of modules) {
    if (module.jobs !== undefined) scheduler.registerAll(module.jobs);
    for (const [name, handler] of Object.entries(module.subscribers ?? {})) events.register(name, handler);
    for (const [name, ack] of Object.entries(module.acks ?? {})) devices.onAcked(name, ack.kind, ack.handle);
  }
  const retentionLog = log('retention');
  const retention = new Retention({
    db,
    clock,
    retentionDays: config.retentionDays,
    auditRetentionDays: config.auditRetentionDays,
    countDeleted: (kind, rows) => metrics.countDeleted(kind, rows),
    onError: (err) => retentionLog.error({ err }, 'retention failed'),
    ...(config.retentionTestSeconds === null
      ? {}
      : {
          windowMs: config.retentionTestSeconds * 1000,
          pollMs: Math.max(10_000, config.retentionTestSeconds * 100),
        }),
  });

  // Autovacuum keeps the planner's statistics fresh and reuses the space of deleted rows; a server
  // that runs without it is told of at start, since nothing else does that work.
  const autovacuumOff = (await db.query<{ autovacuum: string }>('SHOW autovacuum'))[0]?.autovacuum === 'off';

  let app: App;
  try {
    app = await buildApp({
      config,
      db,
      clock,
      logger,
      devices,
      metrics,
      modules,
      ...(opts.failureLimit === undefined ? {} : { failureLimit: opts.failureLimit }),
    });
  } catch (err) {
    if (opts.speech === undefined) await speech.close(); // its worker threads started with it
    throw err;
  }
  const deliverer = webhooks.deliverer;
  app.addHook('onReady', async () => {
    // Engines warm before the first request, so it is not the slow one.
    if (opts.speech === undefined && warmSpeech) {
      await speech.ready();
      speechLog.info({ engines: speech.engines }, `speech engine: ${speech.engines[0] ?? 'none'} (best first: ${speech.engines.join(', ')})`);
    }
    if (autovacuumOff) {
      retentionLog.warn(
        {},
        'PostgreSQL autovacuum is off: the planner statistics go stale and the space of deleted and updated rows is reused only once something vacuums and analyzes the tables (docs/operations.md)',
      );
    }
    if (opts.devices === undefined) await devices.start();
    feed.start(); // streams are live in tests too: the feed reads only while someone listens
    if (opts.manualJobs === true) return;
    await events.placeCursors();
    scheduler.start();
    health.start();
    events.start();
    deliverer.start();
    retention.start();
  });
  // Before the server closes: open streams would hold it open until their clients left.
  app.addHook('preClose', async () => live.closeAll());
  app.addHook('onClose', async () => {
    await feed.stop();
    await scheduler.stop();
    await retention.stop();
    await events.stop();
    await deliverer.stop(); // attempts in flight are cut short and their deliveries due again at once
    if (opts.devices === undefined) await devices.stop(); // the last queued messages go out, the last acks are recorded
    await health.stop(); // after the devices: their last sightings are written too
    if (opts.speech === undefined) await speech.close();
    await hasher.close();
    if (parts.ownsDb) await db.close();
  });
  return { app, config, db, clock, scheduler, devices, events, webhooks: deliverer, speech, health, metrics, retention, feed, live, apiTokens };
}
