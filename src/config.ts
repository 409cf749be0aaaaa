// The service's configuration: read once from the environment at start, validated, frozen.
// Nothing else in the code reads process.env.
import path from 'node:path';
import { EXAMPLE_SECRET_PROBLEM, isExampleSecret } from './example-secrets.ts';

export interface Config {
  readonly port: number;
  readonly host: string;
  /** postgres:// URL; null means the embedded PostgreSQL server in dataDir. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** How long a start waits for DATABASE_URL's server to answer (compose setups start it late). */
  readonly databaseWaitSeconds: number;
  /** null: generated on first start and kept (hashed) in the database. */
  readonly secretToken: string | null;
  /** Public URL of this service as the outside world sees it (signatures of R2 are over it). */
  readonly publicBaseUrl: string;
  /** PUBLIC_BASE_URL's host name (lower case, IPv6 in brackets) when it is set: /metrics answers only it and loopback names. */
  readonly publicHost: string | null;
  /** mqtt:// or mqtts:// URL of an external broker; null runs the embedded broker. */
  readonly mqttUrl: string | null;
  readonly mqttPort: number;
  /** Shared secret an external broker's HTTP auth plugin presents to /internal/mqtt/*; null disables them. */
  readonly mqttAuthSecret: string | null;
  /** The service's client id on an external broker; set, it keeps a persistent session there. */
  readonly mqttClientId: string | null;
  /** Embedded broker: bytes written for one device and not yet taken by its socket (devices/lanes.ts). */
  readonly deviceInflightBytes: number;
  readonly cfhTimeoutSeconds: number;
  /** CFH_ESCALATION_SECONDS: when an unclaimed request escalates, for a location without its own (0: never). */
  readonly cfhEscalationSeconds: number;
  /** A device not connected and not heard from for this long is offline (device health). */
  readonly deviceOfflineSeconds: number;
  /** Speech engines (worker threads, ~95 MB each); each speaks one text at a time. */
  readonly speechWorkers: number;
  readonly provisionFile: string | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Which X-Forwarded-For hops to believe for the client address (Fastify's trustProxy). */
  readonly trustProxy: boolean | string;
  /** Webhooks may go to loopback, link-local and private addresses (a self-hosted store's own network). */
  readonly webhookAllowPrivate: boolean;
  /** Attempts one instance has in flight to one webhook endpoint at most (each to another store). */
  readonly webhookEndpointConcurrency: number;
  /** Days that delivered device messages, played announcements' audio, webhook logs and events are kept. */
  readonly retentionDays: number;
  /** RETENTION_TEST_SECONDS (for soak tests only, never production): the retention window in seconds,
   * replacing RETENTION_DAYS, and the sweep then runs every tenth of it (at least every 10 s) instead
   * of hourly. Unset (null) in production. */
  readonly retentionTestSeconds: number | null;
  /** The bearer token GET /metrics requires; null: /metrics is open. */
  readonly metricsToken: string | null;
  /** REQUEST_TIMEOUT_SECONDS: how long a client may take to send a whole request (headers and body). */
  readonly requestTimeoutSeconds: number;
  /** Seconds a radio play message may wait to be sent (its expires_at = queued_at + this). */
  readonly radioMessageTtlSeconds: number;
  /** Unplayed messages an edge device holds at most; beyond it the oldest normal one is dropped. */
  readonly radioQueueLimit: number;
  /** Single sign-on (section 17); null when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are not all set. */
  readonly oidc: OidcConfig | null;
  /** PASSWORD_SIGN_IN: who may sign in with a password (`admins`: org_admins only, the default with OIDC). */
  readonly passwordSignIn: 'on' | 'admins' | 'off';
  /** Days that audit entries are kept. */
  readonly auditRetentionDays: number;
  /** NODE_ENV=production: a documentation example secret (here or in PROVISION_FILE) stops the start. */
  readonly production: boolean;
  /** The variables whose secret is a documentation example (warned about at start); empty in production. */
  readonly exampleSecrets: readonly string[];
}

export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The claim whose values (a string or an array of strings) sso_role_mappings match. */
  readonly rolesClaim: string;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.variable = variable;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: readonly string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (/^true$/i.test(raw)) return true;
  if (/^false$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

function oidc(env: Env): OidcConfig | null {
  const issuer = url(env, 'OIDC_ISSUER', ['https:', 'http:']);
  const clientId = text(env, 'OIDC_CLIENT_ID');
  const clientSecret = text(env, 'OIDC_CLIENT_SECRET');
  const set = [issuer, clientId, clientSecret].filter((v) => v !== null).length;
  if (set === 0) return null;
  if (issuer === null) throw new ConfigError('OIDC_ISSUER', 'is required with OIDC_CLIENT_ID and OIDC_CLIENT_SECRET');
  if (clientId === null) throw new ConfigError('OIDC_CLIENT_ID', 'is required with OIDC_ISSUER');
  if (clientSecret === null) throw new ConfigError('OIDC_CLIENT_SECRET', 'is required with OIDC_ISSUER');
  if (new URL(issuer).protocol === 'http:' && !LOOPBACK_HOST.test(new URL(issuer).hostname)) {
    throw new ConfigError('OIDC_ISSUER', 'must be https:// (http:// only on a loopback address)');
  }
  const rolesClaim = text(env, 'OIDC_ROLES_CLAIM') ?? 'groups';
  return Object.freeze({ issuer: issuer.replace(/\/+$/, ''), clientId, clientSecret, rolesClaim });
}

function passwordSignIn(env: Env, withOidc: boolean): Config['passwordSignIn'] {
  const raw = text(env, 'PASSWORD_SIGN_IN');
  if (raw === null) return withOidc ? 'admins' : 'on';
  if (raw === 'on' || raw === 'admins' || raw === 'off') return raw;
  throw new ConfigError('PASSWORD_SIGN_IN', `must be on, admins or off, got "${raw}"`);
}

function trustProxy(env: Env): boolean | string {
  const raw = text(env, 'TRUST_PROXY');
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^[0-9a-fA-F.:/, ]+$/.test(raw)) return raw;
  throw new ConfigError('TRUST_PROXY', 'must be true, false, or a comma-separated list of proxy addresses/CIDRs');
}

/** The variables whose secret (or a URL's password) is one of the documentation's examples. */
function exampleSecrets(env: Env): string[] {
  const password = (name: string) => {
    try {
      return decodeURIComponent(new URL(text(env, name) ?? '').password);
    } catch {
      return '';
    }
  };
  const secrets: [string, string][] = [
    ...['SECRET_TOKEN', 'METRICS_TOKEN', 'MQTT_AUTH_SECRET', 'OIDC_CLIENT_SECRET'].map((name): [string, string] => [name, text(env, name) ?? '']),
    ['DATABASE_URL', password('DATABASE_URL')],
    ['MQTT_URL', password('MQTT_URL')],
  ];
  return secrets.filter(([, value]) => value !== '' && isExampleSecret(value)).map(([name]) => name);
}

export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = text(env, 'HOST') ?? '0.0.0.0';
  const secretToken = text(env, 'SECRET_TOKEN');
  if (secretToken !== null && secretToken.length < 16) {
    throw new ConfigError('SECRET_TOKEN', 'must be at least 16 characters');
  }
  const logLevel = text(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const provisionFile = text(env, 'PROVISION_FILE');
  const mqttAuthSecret = text(env, 'MQTT_AUTH_SECRET');
  if (mqttAuthSecret !== null && mqttAuthSecret.length < 16) {
    throw new ConfigError('MQTT_AUTH_SECRET', 'must be at least 16 characters');
  }
  const metricsToken = text(env, 'METRICS_TOKEN');
  // Any token a bearer header can carry: the operator's scraper chooses it.
  if (metricsToken !== null && /\s/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN', 'must not contain spaces');
  }
  const mqttClientId = text(env, 'MQTT_CLIENT_ID');
  if (mqttClientId !== null && !/^[A-Za-z0-9_.:-]{1,128}$/.test(mqttClientId)) {
    throw new ConfigError('MQTT_CLIENT_ID', 'must be 1 to 128 letters, digits or _ . : -');
  }
  const single = oidc(env);
  const production = text(env, 'NODE_ENV') === 'production';
  const examples = exampleSecrets(env);
  if (production && examples.length > 0) throw new ConfigError(examples.join(', '), `${EXAMPLE_SECRET_PROBLEM} (refused with NODE_ENV=production)`);
  return Object.freeze({
    port,
    host,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(cwd, text(env, 'DATA_DIR') ?? 'data'),
    databaseWaitSeconds: integer(env, 'DATABASE_WAIT_SECONDS', 30, 0, 3600),
    secretToken,
    publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''),
    publicHost: text(env, 'PUBLIC_BASE_URL') === null ? null : new URL(publicBaseUrl).hostname.toLowerCase(),
    mqttUrl: url(env, 'MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']),
    mqttPort: integer(env, 'MQTT_PORT', 1883, 0, 65535),
    mqttAuthSecret,
    mqttClientId,
    cfhTimeoutSeconds: integer(env, 'CFH_TIMEOUT_SECONDS', 300, 1, 86_400),
    cfhEscalationSeconds: integer(env, 'CFH_ESCALATION_SECONDS', 120, 0, 86_400),
    deviceOfflineSeconds: integer(env, 'DEVICE_OFFLINE_SECONDS', 300, 1, 86_400),
    speechWorkers: integer(env, 'SPEECH_WORKERS', 1, 1, 16),
    provisionFile: provisionFile === null ? null : path.resolve(cwd, provisionFile),
    logLevel: logLevel as Config['logLevel'],
    trustProxy: trustProxy(env),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookEndpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 32, 1, 256),
    retentionDays: integer(env, 'RETENTION_DAYS', 90, 1, 36_500),
    retentionTestSeconds: text(env, 'RETENTION_TEST_SECONDS') === null ? null : integer(env, 'RETENTION_TEST_SECONDS', 0, 60, 86_400),
    requestTimeoutSeconds: integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3_600),
    metricsToken,
    radioMessageTtlSeconds: integer(env, 'RADIO_MESSAGE_TTL_SECONDS', 120, 1, 86_400),
    radioQueueLimit: integer(env, 'RADIO_QUEUE_LIMIT', 10, 1, 10_000),
    deviceInflightBytes: integer(env, 'DEVICE_INFLIGHT_BYTES', 256 * 1024, 4 * 1024, 64 * 1024 * 1024),
    oidc: single,
    passwordSignIn: passwordSignIn(env, single !== null),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 400, 1, 36_500),
    production,
    exampleSecrets: Object.freeze(examples),
  });
}
