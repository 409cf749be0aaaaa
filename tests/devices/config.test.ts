import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('the broker settings are read and checked, naming the variable at fault', () => {
  const config = loadConfig({ MQTT_URL: 'mqtt://svc:pw@broker:1883', MQTT_AUTH_SECRET: 'a-broker-secret-16+', MQTT_CLIENT_ID: 'storeops-1' });
  assert.equal(config.mqttAuthSecret, 'a-broker-secret-16+');
  assert.equal(config.mqttClientId, 'storeops-1');
  const defaults = loadConfig({});
  assert.equal(defaults.mqttAuthSecret, null);
  assert.equal(defaults.mqttClientId, null);
  assert.equal(defaults.deviceInflightBytes, 256 * 1024);
  assert.equal(loadConfig({ DEVICE_INFLIGHT_BYTES: '65536' }).deviceInflightBytes, 65536);
  for (const [name, value] of [
    ['MQTT_AUTH_SECRET', 'short'],
    ['MQTT_CLIENT_ID', 'has space'],
    ['MQTT_URL', 'http://broker'],
    ['MQTT_PORT', '70000'],
    ['DEVICE_INFLIGHT_BYTES', '100'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && err.variable === name,
      name,
    );
  }
});
