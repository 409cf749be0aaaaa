// The whole service built from its configuration: database, clock, speech, device gateway, job
// scheduler with every feature's job kinds, event subscribers, and the HTTP app whose lifecycle
// starts and stops them all (onReady / onClose). main.ts, the tests and the benchmark use it.
import fs from 'node:fs';
import { deviceActor } from './access/actor.ts';
import { buildApp, type App } from './app.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import { migrate } from './db/migrate.ts';
import { DatabaseStartError, openConfiguredDb } from './db/open.ts';
import { DeviceGateway, type GatewayListeners, type GatewayLogger } from './devices/gateway.ts';
import { EventSubscribers } from './events/subscribers.ts';
import type { FailureLimit } from './http/rate-limit.ts';
import { resolveSecretToken } from './http/secret-token.ts';
import { Scheduler } from './jobs/scheduler.ts';
import { cfhJobs } from './cfh/jobs.ts';
import { lockerJobs } from './lockers/jobs.ts';
import { DeviceHealth } from './devices/health.ts';
import { applyProvisioning, ProvisioningError, type ProvisioningSummary } from './provisioning/apply.ts';
import { RADIO_REQUESTS_SUBSCRIBER } from './radio/announce.ts';
import { handleHeard, type RadioStaff, type VoiceCfh, type VoiceEdge } from './radio/heard.ts';
import { HEARD_CONCURRENCY_PER_EDGE, HEARD_QUEUE_PER_EDGE, heardGate } from './radio/heard-gate.ts';
import { announcementSubscriber, RADIO_ANNOUNCEMENTS_SUBSCRIBER, radioJobs } from './radio/jobs.ts';
import { followRequests } from './radio/voice-store.ts';
import { claimRequest, markOnTheWay, type CfhDeps } from './cfh/requests.ts';
import type { Staff } from './cfh/rules.ts';
import { frenchOptionWords } from './cfh/words.ts';
import { RADIO_PLAYED_ACKS, recordPlayed } from './radio/played.ts';
import { createSpeechSynthesizer, lazySpeechSynthesizer, type SpeechSynthesizer } from './radio/speech/speech.ts';
import { WebhookDeliverer } from './webhooks/deliverer.ts';
import { WEBHOOKS_SUBSCRIBER, webhookFanOut } from './webhooks/fanout.ts';
import { ServiceMetrics } from './metrics/metrics.ts';
import { Retention } from './retention/retention.ts';
import { LiveFeed } from './live/feed.ts';
import { LiveStreams } from './live/streams.ts';

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
}

/**
 * Voice actions claim through Call for Help's own use cases, as the edge device they were heard
 * on: no API token, request_from "radio".
 */
function voiceCfh(deps: CfhDeps): VoiceCfh {
  const actor = (edge: VoiceEdge) => deviceActor('edge_device', edge.edgeId, edge);
  const staff = (s: RadioStaff): Staff => ({ ...s, from: 'radio' });
  return {
    claim: (edge, messageId, s) => claimRequest(deps, actor(edge), messageId, staff(s)),
    onTheWay: (edge, messageId, s) => markOnTheWay(deps, actor(edge), messageId, staff(s)),
  };
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
      const summary = await applyProvisioning(db, clock, JSON.parse(fs.readFileSync(config.provisionFile, 'utf8')));
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
  // The app's logger exists once the app does; components log through it from then on.
  let app: App | null = null;
  const log = (component: string): GatewayLogger => {
    const at = (level: 'debug' | 'info' | 'warn' | 'error') => (obj: object, msg: string) => app?.log[level]({ ...obj, component }, msg);
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  };
  const metrics = new ServiceMetrics();
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
  const scheduler = new Scheduler({ db, clock, log: log('jobs') });
  scheduler.registerAll(lockerJobs({ clock }));
  scheduler.registerAll(cfhJobs());
  const health = new DeviceHealth({ db, clock, offlineSeconds: config.deviceOfflineSeconds, log: log('health') });
  scheduler.registerAll(health.jobs());
  const events = new EventSubscribers({ db, log: log('events') });
  events.register(WEBHOOKS_SUBSCRIBER, webhookFanOut({ clock }));
  const radioDeps = {
    speech,
    ttlSeconds: config.radioMessageTtlSeconds,
    queueLimit: config.radioQueueLimit,
    observeSynthesis: (seconds: number) => metrics.observeSynthesis(seconds),
  };
  scheduler.registerAll(radioJobs({ ...radioDeps, db, frenchOptionWords: (requestId) => frenchOptionWords(db, requestId) }));
  events.register(RADIO_ANNOUNCEMENTS_SUBSCRIBER, announcementSubscriber({ clock }));
  events.register(RADIO_REQUESTS_SUBSCRIBER, followRequests);
  const voiceLog = log('radio');
  const voice = {
    ...radioDeps,
    db,
    clock,
    cfh: voiceCfh({ db, clock, timeoutSeconds: config.cfhTimeoutSeconds, escalationSeconds: config.cfhEscalationSeconds }),
    log: voiceLog,
  };
  const heard = heardGate((edgeId, payload) => handleHeard(voice, edgeId, payload), {
    concurrency: HEARD_CONCURRENCY_PER_EDGE,
    queueLimit: HEARD_QUEUE_PER_EDGE,
    log: voiceLog,
  });
  const listeners: GatewayListeners = {
    presence: health,
    heard: async (edgeId, payload) => {
      await heard(edgeId, payload);
    },
  };
  const devices = opts.devices?.(listeners) ?? new DeviceGateway({ config, db, clock, log: log('devices'), listeners });
  const webhooks = new WebhookDeliverer({
    db,
    clock,
    allowPrivate: config.webhookAllowPrivate,
    perEndpoint: config.webhookEndpointConcurrency,
    log: log('webhooks'),
  });
  devices.onAcked(RADIO_PLAYED_ACKS, 'edge', recordPlayed);
  const retentionLog = log('retention');
  const retention = new Retention({
    db,
    clock,
    retentionDays: config.retentionDays,
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

  const feed = new LiveFeed({ db, log: log('live') });
  const live = new LiveStreams({ feed, log: log('live') });

  let built: App;
  try {
    built = await buildApp({
      config,
      db,
      clock,
      devices,
      speech,
      metrics,
      live,
      secretDigest: parts.secretDigest,
      ...(opts.failureLimit === undefined ? {} : { failureLimit: opts.failureLimit }),
    });
  } catch (err) {
    if (opts.speech === undefined) await speech.close(); // its worker threads started with it
    throw err;
  }
  app = built;
  built.addHook('onReady', async () => {
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
    webhooks.start();
    retention.start();
  });
  // Before the server closes: open streams would hold it open until their clients left.
  built.addHook('preClose', async () => live.closeAll());
  built.addHook('onClose', async () => {
    await feed.stop();
    await scheduler.stop();
    await retention.stop();
    await events.stop();
    await webhooks.stop(); // attempts in flight are cut short and their deliveries due again at once
    if (opts.devices === undefined) await devices.stop(); // the last queued messages go out, the last acks are recorded
    await health.stop(); // after the devices: their last sightings are written too
    if (opts.speech === undefined) await speech.close();
    if (parts.ownsDb) await db.close();
  });
  return { app: built, config, db, clock, scheduler, devices, events, webhooks, speech, health, metrics, retention, feed, live };
}
