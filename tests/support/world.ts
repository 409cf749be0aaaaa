// Test fixtures: the composed service on the process's database (./db.ts), and helpers that make
// each test's own organizations, lockers and tokens with fresh ids.
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import { compose, type Service } from '../../src/compose.ts';
import { ManualClock, type Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Db } from '../../src/db/db.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import type { Scheduler } from '../../src/jobs/scheduler.ts';
import type { EventSubscribers } from '../../src/events/subscribers.ts';
import type { WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { DeviceGateway, type GatewayListeners } from '../../src/devices/gateway.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import type { ProvisioningFile, TOKEN_SCOPES } from '../../src/provisioning/schema.ts';
import { createSpeechSynthesizer, lazySpeechSynthesizer, type SpeechSynthesizer } from '../../src/radio/speech/speech.ts';
import type { ApiTokens } from '../../src/http/auth.ts';
import type { FailureLimit } from '../../src/http/rate-limit.ts';
import type { LiveStreams } from '../../src/live/streams.ts';
import type { ServiceMetrics } from '../../src/metrics/metrics.ts';
import { testDb } from './db.ts';
import { closeAtEnd, closeWith, type Teardown } from './teardown.ts';

export { freshDb, onExternalServer, otherInstanceDb, testDatabaseUrl, testDb } from './db.ts';
export { closeAtEnd, closeWith, type Teardown } from './teardown.ts';

export const TEST_SECRET = `test-secret-${crypto.randomBytes(8).toString('hex')}`;
/** An external broker for the device tests (e.g. Mosquitto); unset, the apps use an embedded one. */
export const TEST_MQTT_URL = process.env.TEST_MQTT_URL || null;

let sharedSpeech: SpeechSynthesizer | null = null;

/** The process's speech engines: started on first use, closed when the test file ends. */
export function testSpeech(): SpeechSynthesizer {
  if (sharedSpeech === null) {
    // A generous time limit: test files run side by side on few CPUs, and speed is the benchmark's.
    sharedSpeech = lazySpeechSynthesizer(() => createSpeechSynthesizer({ workers: 2, timeoutMs: 60_000 }));
    const speech = sharedSpeech;
    closeAtEnd(() => speech.close());
  }
  return sharedSpeech;
}

let counter = 0;
const base = crypto.randomInt(1, 2_000_000) * 1000;
/** An id no other test (or test process) uses. */
export function freshId(): number {
  counter++;
  return base + counter;
}

/** A new API token of the organization, provisioned as an operator would; returns its value. */
export async function provisionToken(
  db: Db,
  clock: Clock,
  organizationId: number,
  scopes: (typeof TOKEN_SCOPES)[number][],
  opts: { revoked?: boolean; expiresAt?: Date; locationIds?: number[] } = {},
): Promise<string> {
  const token = crypto.randomBytes(18).toString('base64url');
  await applyProvisioning(db, clock, {
    api_tokens: [
      {
        name: `t-${crypto.randomBytes(6).toString('hex')}`,
        organization_id: organizationId,
        scopes,
        token,
        revoked: opts.revoked ?? false,
        ...(opts.expiresAt === undefined ? {} : { expires_at: opts.expiresAt.toISOString() }),
        ...(opts.locationIds === undefined ? {} : { location_ids: opts.locationIds }),
      },
    ],
  });
  return token;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://storeops.test',
    SECRET_TOKEN: TEST_SECRET,
    MQTT_PORT: '0',
    ...(TEST_MQTT_URL !== null ? { MQTT_URL: TEST_MQTT_URL } : {}),
    ...overrides,
  });
}

export interface TestContext {
  app: App;
  db: Db;
  clock: ManualClock;
  scheduler: Scheduler;
  /** The event log's subscribers; `await events.runPending()` hands them what committed. */
  events: EventSubscribers;
  /** The webhook deliverer; `await webhooks.runDue()` attempts every due delivery. */
  webhooks: WebhookDeliverer;
  config: Config;
  speech: SpeechSynthesizer;
  /** The device channel, started: dispatches on its own; `await devices.dispatchPending()` publishes now. */
  devices: DeviceGateway;
  /** Where a test device connects (mqtt://127.0.0.1:<embedded port>, or TEST_MQTT_URL). */
  mqttUrl: string;
  /** Device health; `await health.flush()` writes the last-seen times it holds. */
  health: Service['health'];
  /** What open streams hear; `await feed.readNow()` reads the event log now. */
  feed: Service['feed'];
  /** The app's open Server-Sent Events streams. */
  live: Service['live'];
  /** The service's retention; `await retention.runNow()` sweeps now. */
  retention: Service['retention'];
}

/** A client id of its own on an external broker (test processes share TEST_MQTT_URL). */
export function testGatewayOptions(): { clientId: string } {
  return { clientId: `storeops-test-${crypto.randomBytes(6).toString('hex')}` };
}

let sharedDevices: Promise<DeviceGateway> | null = null;
let devicesClock: Clock = new ManualClock(new Date());
let devicesListeners: GatewayListeners | null = null;

/** One device gateway (one broker) per test process: apps sharing a database must not each
 * publish the others' messages on brokers their devices are not connected to. It reads the clock
 * of the latest testApp, tells the latest testApp's device health and voice actions of devices,
 * and is made from the first testApp's config. */
function testDevices(db: Db, config: Config): Promise<DeviceGateway> {
  if (sharedDevices === null) {
    const listeners: GatewayListeners = {
      presence: {
        seen: (device) => devicesListeners?.presence.seen(device),
        connected: (device) => devicesListeners?.presence.connected(device),
        disconnected: (device) => devicesListeners?.presence.disconnected(device),
      },
      heard: async (edgeId, payload) => {
        await devicesListeners?.heard(edgeId, payload);
      },
    };
    const devices = new DeviceGateway({ config, db, clock: { now: () => devicesClock.now() }, pollMs: 100, listeners, ...testGatewayOptions() });
    sharedDevices = devices.start().then(() => devices);
    closeAtEnd(() => devices.stop()); // closers run in reverse: after the apps, before the database
  }
  return sharedDevices;
}

export interface TestAppOptions {
  clock?: ManualClock;
  config?: Config;
  extend?: (app: App, deps: ExtendDeps) => void;
  failureLimit?: FailureLimit;
  speech?: SpeechSynthesizer;
  /** Another handle on the process's database (`otherInstanceDb()`): a second instance. */
  db?: Db;
  /** The test the app is built for (`async (t) => ...`): it is closed when that test ends. Without
   * it, the app is the file's (built in `before()`, shared by its tests) and closed at its end. */
  t?: Teardown;
}

/** What a test's own routes (`extend`) may use of the composed service. */
export interface ExtendDeps {
  config: Config;
  db: Db;
  clock: ManualClock;
  devices: DeviceGateway;
  speech: SpeechSynthesizer;
  secretDigest: string;
  failureLimit: FailureLimit | undefined;
  metrics: ServiceMetrics;
  live: LiveStreams;
  apiTokens: ApiTokens;
}

/** The composed service on the process's database with a manual clock, closed with its test or at
 * the file's end. Its scheduler and event subscribers do not poll on their own: tests run them
 * (runDue, runPending). */
export async function testApp(opts: TestAppOptions = {}): Promise<TestContext> {
  const db = opts.db ?? (await testDb());
  const clock = opts.clock ?? new ManualClock(new Date());
  const config = opts.config ?? testConfig();
  devicesClock = clock;
  const devices = await testDevices(db, config);
  const speech = opts.speech ?? testSpeech();
  // Suites send many refused requests on purpose; the brute-force guard has its own tests.
  const failureLimit = opts.failureLimit ?? { max: Number.MAX_SAFE_INTEGER, windowMs: 60_000 };
  const secretDigest = sha256hex(TEST_SECRET);
  const service = await compose({
    config,
    db,
    clock,
    devices: (listeners) => {
      devicesListeners = listeners;
      return devices;
    },
    speech,
    secretDigest,
    failureLimit,
    manualJobs: true,
  });
  opts.extend?.(service.app, {
    config,
    db,
    clock,
    devices,
    speech,
    secretDigest,
    failureLimit,
    metrics: service.metrics,
    live: service.live,
    apiTokens: service.apiTokens,
  });
  await service.app.ready();
  closeWith(opts.t, () => service.app.close());
  return {
    app: service.app,
    db,
    clock,
    scheduler: service.scheduler,
    events: service.events,
    webhooks: service.webhooks,
    config,
    speech,
    devices,
    mqttUrl: devices.deviceUrl ?? '',
    health: service.health,
    feed: service.feed,
    live: service.live,
    retention: service.retention,
  };
}

export interface World {
  organizationId: number;
  locationId: number;
  lockerId: number;
  lockerKey: string;
  cabinetIds: number[];
  token: string;
  edgeId: string;
  edgeKey: string;
  accountSid: string;
  authToken: string;
  optionId: number;
}

/** Provisions one organization with a location, a locker of `cabinets` cabinets, a CFH option, an
 * edge device, a messaging account and a token with the cfh, radio and webhooks scopes: every id fresh. */
export async function makeWorld(
  db: Db,
  clock: Clock,
  opts: {
    cabinets?: number;
    lockerVersion?: number;
    rearLoading?: boolean;
    cfhTimeoutSeconds?: number;
    voiceHandlers?: ('normalize' | 'chime' | 'transcript')[];
    /** A store of this (already provisioned) organization; else a new organization. */
    organizationId?: number;
  } = {},
): Promise<World> {
  const organizationId = opts.organizationId ?? freshId();
  const locationId = freshId();
  const lockerId = freshId();
  const optionId = freshId();
  const cabinetIds = Array.from({ length: opts.cabinets ?? 3 }, () => freshId());
  const secret = () => crypto.randomBytes(18).toString('base64url');
  const world: World = {
    organizationId,
    locationId,
    lockerId,
    cabinetIds,
    optionId,
    lockerKey: secret(),
    token: secret(),
    edgeId: `edge-${lockerId}`,
    edgeKey: secret(),
    accountSid: `AC${crypto.randomBytes(16).toString('hex')}`,
    authToken: secret(),
  };
  const file: ProvisioningFile = {
    organizations: opts.organizationId === undefined ? [{ id: organizationId, name: `Org ${organizationId}` }] : [],
    locations: [{ id: locationId, organization_id: organizationId, name: `Store ${locationId}`, cfh_timeout_seconds: opts.cfhTimeoutSeconds ?? null }],
    lockers: [
      {
        id: lockerId,
        location_id: locationId,
        name: 'Front lockers',
        version: opts.lockerVersion ?? 2,
        rear_loading_available: opts.rearLoading ?? true,
        timer: 30,
        api_key: world.lockerKey,
        cabinets: cabinetIds.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' as const })),
      },
    ],
    cfh_options: [
      {
        id: optionId,
        organization_id: organizationId,
        location_id: locationId,
        text_en: 'Help',
        text_fr: 'Aide',
        prompt_en: 'Someone is coming',
        prompt_fr: "Quelqu'un arrive",
      },
    ],
    radio_edges: [{ edge_id: world.edgeId, location_id: locationId, name: 'Floor radio', device_key: world.edgeKey, voice_handlers: opts.voiceHandlers ?? [] }],
    messaging_accounts: [{ account_sid: world.accountSid, organization_id: organizationId, auth_token: world.authToken }],
    api_tokens: [{ name: `token-${locationId}`, organization_id: organizationId, scopes: ['cfh', 'radio', 'webhooks'], token: world.token }],
  };
  await applyProvisioning(db, clock, file);
  return world;
}

/** `?secret_token=...` for L1-L6. */
export const withSecret = (path: string) => `${path}${path.includes('?') ? '&' : '?'}secret_token=${encodeURIComponent(TEST_SECRET)}`;
