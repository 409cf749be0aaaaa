import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

test('the defaults run the embedded service', () => {
  const config = loadConfig({}, '/srv/storeops');
  assert.equal(config.port, 3000);
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.databaseUrl, null);
  assert.equal(config.dataDir, '/srv/storeops/data');
  assert.equal(config.mqttUrl, null);
  assert.equal(config.mqttPort, 1883);
  assert.equal(config.cfhTimeoutSeconds, 300);
  assert.equal(config.speechWorkers, 1);
  assert.equal(config.publicBaseUrl, 'http://localhost:3000');
  assert.equal(config.retentionDays, 90);
  assert.equal(config.metricsToken, null, '/metrics needs no token (it answers loopback only then)');
  assert.ok(Object.isFrozen(config));
});

test('a bad value stops the start naming its variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'not-a-port' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ MQTT_URL: 'nope' }, 'MQTT_URL'],
    [{ MQTT_PORT: '-1' }, 'MQTT_PORT'],
    [{ CFH_TIMEOUT_SECONDS: '0' }, 'CFH_TIMEOUT_SECONDS'],
    [{ SPEECH_WORKERS: '0' }, 'SPEECH_WORKERS'],
    [{ SPEECH_WORKERS: 'many' }, 'SPEECH_WORKERS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL'],
    [{ SECRET_TOKEN: 'short' }, 'SECRET_TOKEN'],
    [{ CFH_ESCALATION_SECONDS: 'soon' }, 'CFH_ESCALATION_SECONDS'],
    [{ CFH_ESCALATION_SECONDS: '-5' }, 'CFH_ESCALATION_SECONDS'],
    [{ RETENTION_DAYS: '0' }, 'RETENTION_DAYS'],
    [{ RETENTION_DAYS: '36501' }, 'RETENTION_DAYS'],
    [{ RETENTION_DAYS: '1.5' }, 'RETENTION_DAYS'],
    [{ RETENTION_DAYS: 'forever' }, 'RETENTION_DAYS'],
    [{ METRICS_TOKEN: 'long enough but with spaces' }, 'METRICS_TOKEN'],
  ];
  for (const [env, variable] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: Error) => err instanceof ConfigError && err.variable === variable && err.message.startsWith(`${variable}:`),
      variable,
    );
  }
});

test('values are read from the environment given', () => {
  const config = loadConfig({
    PORT: '8080',
    DATABASE_URL: 'postgres://u@db/storeops',
    MQTT_URL: 'mqtt://broker:1883',
    PUBLIC_BASE_URL: 'https://ops.example.com/',
    SECRET_TOKEN: 'a-long-enough-secret',
    SPEECH_WORKERS: '3',
  });
  assert.equal(config.port, 8080);
  assert.equal(config.speechWorkers, 3);
  assert.equal(config.databaseUrl, 'postgres://u@db/storeops');
  assert.equal(config.mqttUrl, 'mqtt://broker:1883');
  assert.equal(config.publicBaseUrl, 'https://ops.example.com');
  assert.equal(config.secretToken, 'a-long-enough-secret');
});

test('the retention window and the metrics token are read from the environment', () => {
  const config = loadConfig({ RETENTION_DAYS: '1', METRICS_TOKEN: 'scrape-0123456789abcdef' });
  assert.equal(config.retentionDays, 1);
  assert.equal(config.metricsToken, 'scrape-0123456789abcdef');
  assert.equal(loadConfig({ RETENTION_DAYS: '36500' }).retentionDays, 36_500);
});

test('RETENTION_TEST_SECONDS (soaks only) is unset by default, and refused below a minute', () => {
  assert.equal(loadConfig({}).retentionTestSeconds, null);
  assert.equal(loadConfig({ RETENTION_TEST_SECONDS: '300' }).retentionTestSeconds, 300);
  assert.throws(() => loadConfig({ RETENTION_TEST_SECONDS: '59' }), /RETENTION_TEST_SECONDS/);
});

test('the radio TTL and queue bound: 120 s and 10 by default, read from the environment, refused when not whole positive numbers', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.radioMessageTtlSeconds, 120);
  assert.equal(defaults.radioQueueLimit, 10);
  const config = loadConfig({ RADIO_MESSAGE_TTL_SECONDS: '30', RADIO_QUEUE_LIMIT: '3' });
  assert.equal(config.radioMessageTtlSeconds, 30);
  assert.equal(config.radioQueueLimit, 3);
  for (const [variable, value] of [
    ['RADIO_MESSAGE_TTL_SECONDS', '0'],
    ['RADIO_MESSAGE_TTL_SECONDS', '2m'],
    ['RADIO_QUEUE_LIMIT', '-1'],
    ['RADIO_QUEUE_LIMIT', '0'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [variable]: value }),
      (err: Error) => err instanceof ConfigError && err.variable === variable,
    );
  }
});

test('CFH_ESCALATION_SECONDS defaults to 120; 0 turns escalation off', () => {
  assert.equal(loadConfig({}).cfhEscalationSeconds, 120);
  assert.equal(loadConfig({ CFH_ESCALATION_SECONDS: '45' }).cfhEscalationSeconds, 45);
  assert.equal(loadConfig({ CFH_ESCALATION_SECONDS: '0' }).cfhEscalationSeconds, 0);
});

test('secrets that are the documentation examples are named for a warning, and refused with NODE_ENV=production', () => {
  const env = {
    SECRET_TOKEN: 'CHANGE-ME-to-something-long',
    DATABASE_URL: 'postgres://storeops:CHANGE-ME@db:5432/storeops',
    MQTT_URL: 'mqtt://storeops:a-real-password-1234@broker:1883',
    METRICS_TOKEN: 'example-metrics-token',
  };
  assert.deepEqual(loadConfig(env).exampleSecrets, ['SECRET_TOKEN', 'METRICS_TOKEN', 'DATABASE_URL']);
  assert.deepEqual(loadConfig({ SECRET_TOKEN: 'my-own-secret-token-0123' }).exampleSecrets, []);
  assert.throws(
    () => loadConfig({ ...env, NODE_ENV: 'production' }),
    (err: unknown) => err instanceof ConfigError && err.variable === 'SECRET_TOKEN, METRICS_TOKEN, DATABASE_URL' && !err.message.includes('CHANGE-ME'),
  );
  assert.equal(loadConfig({ NODE_ENV: 'production', SECRET_TOKEN: 'my-own-secret-token-0123' }).production, true);
});
