// Test fixtures: one database per test process (PGlite in memory, or TEST_DATABASE_URL), and
// helpers that make each test's own organizations, lockers and tokens with fresh ids.
import crypto from 'node:crypto';
import { after } from 'node:test';
import type { App, AppDeps } from '../../src/app.ts';
import { compose } from '../../src/compose.ts';
import { ManualClock, type Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDb, type Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import type { Scheduler } from '../../src/jobs/scheduler.ts';
import type { EventSubscribers } from '../../src/events/subscribers.ts';
import { DeviceGateway } from '../../src/devices/gateway.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import type { ProvisioningFile } from '../../src/provisioning/schema.ts';
import { createSpeechSynthesizer, lazySpeechSynthesizer, type SpeechSynthesizer } from '../../src/radio/speech/speech.ts';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const TEST_SECRET = `test-secret-${crypto.randomBytes(8).toString('hex')}`;
/** An external broker for the device tests (e.g. Mosquitto); unset, the apps use an embedded one. */
export const TEST_MQTT_URL = process.env.TEST_MQTT_URL || null;

let shared: Promise<Db> | null = null;

// Registered when this module is first imported, so it belongs to the file's root and runs after
// its last test (an `after` called inside a hook would run when that hook's scope ends).
const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
  if (shared !== null) await (await shared).close();
});
/** Something for the file's end to close (an app, a gateway, a second database). */
export function closeAtEnd(close: () => Promise<unknown>): void {
  closers.push(close);
}

/** The process's test database, migrated; closed when the test file ends. */
export function testDb(): Promise<Db> {
  if (shared === null) {
    shared = (async () => {
      const url = process.env.TEST_DATABASE_URL;
      if (!url) {
        const db = await openDb({ kind: 'pglite', dataDir: null });
        await migrate(db);
        return db;
      }
      // Test files run in parallel processes: each gets a schema of its own, so one file's
      // scheduler never picks another file's jobs.
      const schema = `storeops_test_${crypto.randomBytes(6).toString('hex')}`;
      await adminQuery(url, `CREATE SCHEMA ${schema}`);
      const db = await openDb({ kind: 'postgres', url, poolSize: 20, schema });
      await migrate(db);
      return dropOnClose(db, url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    })();
  }
  return shared;
}

/** A fresh database of its own (for migration tests); the caller closes it. */
export async function freshDb(): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return openDb({ kind: 'pglite', dataDir: null });
  const name = `storeops_t_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(url, `CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return dropOnClose(await openDb({ kind: 'postgres', url: u.toString() }), url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const admin = await openDb({ kind: 'postgres', url });
  try {
    await admin.query(sql);
  } finally {
    await admin.close();
  }
}

/** The database handle, whose close also drops what the test made for it. */
function dropOnClose(db: Db, url: string, dropSql: string): Db {
  const close = db.close.bind(db);
  return {
    ...db,
    close: async () => {
      await close();
      await adminQuery(url, dropSql);
    },
  };
}

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
  db: Db, clock: Clock, organizationId: number, scopes: ('cfh' | 'radio')[], opts: { revoked?: boolean; expiresAt?: Date } = {},
): Promise<string> {
  const token = crypto.randomBytes(18).toString('base64url');
  await applyProvisioning(db, clock, {
    api_tokens: [{
      name: `t-${crypto.randomBytes(6).toString('hex')}`, organization_id: organizationId, scopes, token, revoked: opts.revoked ?? false,
      ...(opts.expiresAt === undefined ? {} : { expires_at: opts.expiresAt.toISOString() }),
    }],
  });
  return token;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://storeops.test', SECRET_TOKEN: TEST_SECRET, MQTT_PORT: '0',
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
  config: Config;
  speech: SpeechSynthesizer;
  /** The device channel, started: dispatches on its own; `await devices.dispatchPending()` publishes now. */
  devices: DeviceGateway;
  /** Where a test device connects (mqtt://127.0.0.1:<embedded port>, or TEST_MQTT_URL). */
  mqttUrl: string;
}

/** A client id of its own on an external broker (test processes share TEST_MQTT_URL). */
export function testGatewayOptions(): { clientId: string } {
  return { clientId: `storeops-test-${crypto.randomBytes(6).toString('hex')}` };
}

let sharedDevices: Promise<DeviceGateway> | null = null;
let devicesClock: Clock = new ManualClock(new Date());

/** One device gateway (one broker) per test process: apps sharing a database must not each
 * publish the others' messages on brokers their devices are not connected to. It reads the clock
 * of the latest testApp and is made from the first testApp's config. */
function testDevices(db: Db, config: Config): Promise<DeviceGateway> {
  if (sharedDevices === null) {
    const devices = new DeviceGateway({ config, db, clock: { now: () => devicesClock.now() }, pollMs: 100, ...testGatewayOptions() });
    sharedDevices = devices.start().then(() => devices);
    closeAtEnd(() => devices.stop()); // closers run in reverse: after the apps, before the database
  }
  return sharedDevices;
}

/** The composed service on the process's database with a manual clock; closed when the file ends.
 * Its scheduler and event subscribers do not poll on their own: tests run them (runDue, runPending). */
export async function testApp(opts: { clock?: ManualClock; config?: Config; extend?: (app: App, deps: AppDeps) => void; failureLimit?: AppDeps['failureLimit']; speech?: SpeechSynthesizer } = {}): Promise<TestContext> {
  const db = await testDb();
  const clock = opts.clock ?? new ManualClock(new Date());
  const config = opts.config ?? testConfig();
  devicesClock = clock;
  const devices = await testDevices(db, config);
  const speech = opts.speech ?? testSpeech();
  // Suites send many refused requests on purpose; the brute-force guard has its own tests.
  const failureLimit = opts.failureLimit ?? { max: Number.MAX_SAFE_INTEGER, windowMs: 60_000 };
  const secretDigest = sha256hex(TEST_SECRET);
  const service = await compose({ config, db, clock, devices, speech, secretDigest, failureLimit, manualJobs: true });
  opts.extend?.(service.app, { config, db, clock, devices, speech, secretDigest, failureLimit });
  await service.app.ready();
  closeAtEnd(() => service.app.close());
  return { app: service.app, db, clock, scheduler: service.scheduler, events: service.events, config, speech, devices, mqttUrl: devices.deviceUrl ?? '' };
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
 * edge device, a messaging account and a token with both scopes: every id fresh. */
export async function makeWorld(db: Db, clock: Clock, opts: { cabinets?: number; lockerVersion?: number; rearLoading?: boolean; cfhTimeoutSeconds?: number; voiceHandlers?: ('normalize' | 'chime' | 'transcript')[] } = {}): Promise<World> {
  const organizationId = freshId();
  const locationId = freshId();
  const lockerId = freshId();
  const optionId = freshId();
  const cabinetIds = Array.from({ length: opts.cabinets ?? 3 }, () => freshId());
  const secret = () => crypto.randomBytes(18).toString('base64url');
  const world: World = {
    organizationId, locationId, lockerId, cabinetIds, optionId,
    lockerKey: secret(), token: secret(), edgeId: `edge-${lockerId}`, edgeKey: secret(),
    accountSid: `AC${crypto.randomBytes(16).toString('hex')}`, authToken: secret(),
  };
  const file: ProvisioningFile = {
    organizations: [{ id: organizationId, name: `Org ${organizationId}` }],
    locations: [{ id: locationId, organization_id: organizationId, name: `Store ${locationId}`, cfh_timeout_seconds: opts.cfhTimeoutSeconds ?? null }],
    lockers: [{
      id: lockerId, location_id: locationId, name: 'Front lockers', version: opts.lockerVersion ?? 2,
      rear_loading_available: opts.rearLoading ?? true, timer: 30, api_key: world.lockerKey,
      cabinets: cabinetIds.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' as const })),
    }],
    cfh_options: [{ id: optionId, organization_id: organizationId, location_id: locationId, text_en: 'Help', text_fr: 'Aide', prompt_en: 'Someone is coming', prompt_fr: "Quelqu'un arrive" }],
    radio_edges: [{ edge_id: world.edgeId, location_id: locationId, name: 'Floor radio', device_key: world.edgeKey, voice_handlers: opts.voiceHandlers ?? [] }],
    messaging_accounts: [{ account_sid: world.accountSid, organization_id: organizationId, auth_token: world.authToken }],
    api_tokens: [{ name: `token-${organizationId}`, organization_id: organizationId, scopes: ['cfh', 'radio'], token: world.token }],
  };
  await applyProvisioning(db, clock, file);
  return world;
}

/** `?secret_token=...` for L1-L6. */
export const withSecret = (path: string) => `${path}${path.includes('?') ? '&' : '?'}secret_token=${encodeURIComponent(TEST_SECRET)}`;
