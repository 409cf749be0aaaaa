// The service as a process: how a newcomer and an operator meet it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { example, EXAMPLE_TOKEN, listeningUrl, startService, tempDir } from './service-process.ts';

test('a bad PORT stops the start with a message naming it', async () => {
  const service = startService({ PORT: 'not-a-port', DATA_DIR: tempDir() });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /PORT: must be a whole number/);
});

test('a broken provisioning file stops the start naming the bad entry', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'broken.json');
  fs.writeFileSync(file, JSON.stringify({ lockers: [{ id: 1, location_id: 1, name: 'x', api_key: 'k'.repeat(20), cabinets: 'none' }] }));
  const service = startService({ DATA_DIR: path.join(dir, 'data'), PROVISION_FILE: file });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /lockers\[0\]\.cabinets: must be an array/);
});

test('a fresh start generates and prints a secret token once, serves, keeps secrets out of its logs, and stops on SIGTERM', async () => {
  const dataDir = tempDir();
  const first = startService({ DATA_DIR: dataDir, PROVISION_FILE: example });
  const url = await listeningUrl(first);
  const printed = /SECRET_TOKEN was not set[^\n]*\n\s*\n\s+(\S+)/.exec(first.stdout())?.[1];
  assert.ok(printed && printed.length >= 32, 'the generated token is printed');

  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string };
  assert.equal(doc.openapi, '3.1.0');
  assert.equal((await fetch(`${url}/docs/`)).status, 200);
  const secrets = ['query-secret-value-123456', 'bearer-secret-value-123456', 'apikey-secret-value-123456'];
  await fetch(`${url}/readyz?secret_token=${secrets[0]}`, { headers: { authorization: `Bearer ${secrets[1]}`, 'api-key': secrets[2] as string } });

  const second = startService({ DATA_DIR: dataDir });
  assert.equal(await second.exited, 2, 'a second process on the same data directory is refused');
  assert.match(
    second.stderr(),
    new RegExp(`^storeops: the data directory \\S+ is in use by another storeops process \\(pid ${first.child.pid}\\)[^\\n]*\\n$`),
    "one line naming the other's pid",
  );

  // The example file's keys are the documentation's: the start says so, naming each field, not the key.
  assert.match(first.stderr(), /warning: \S+provision\.json lockers\[0\]\.api_key holds an example secret/);
  assert.match(first.stderr(), /api_tokens\[0\]\.token holds an example secret/);
  assert.ok(!first.stderr().includes(EXAMPLE_TOKEN), 'the warning names the field, never the secret');

  const stoppedAt = Date.now();
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  assert.ok(Date.now() - stoppedAt < 10_000, 'exits within seconds');
  for (const secret of secrets) assert.ok(!first.stdout().includes(secret), 'no secret in a log line');
  assert.equal(first.stdout().split(printed).length, 2, 'the generated token appears once, in its notice');
  assert.match(first.stdout(), /secret_token=\[REDACTED\]/);

  const again = startService({ DATA_DIR: dataDir });
  await listeningUrl(again);
  assert.ok(!again.stdout().includes('SECRET_TOKEN was not set'), 'printed only on the start that made it');
  again.child.kill('SIGINT');
  assert.equal(await again.exited, 0);
});

test('an example secret from the documentation in the environment is warned about, and stops a start with NODE_ENV=production', async () => {
  const metrics = { METRICS_TOKEN: 'CHANGE-ME-metrics-token', PORT: '0', MQTT_PORT: '0' };
  const refused = startService({ ...metrics, NODE_ENV: 'production', DATA_DIR: tempDir() });
  assert.equal(await refused.exited, 2);
  assert.match(refused.stderr(), /configuration error: METRICS_TOKEN: holds an example secret .*NODE_ENV=production/);
  assert.ok(!refused.stderr().includes('CHANGE-ME-metrics-token'));

  const warned = startService({ ...metrics, DATA_DIR: tempDir() });
  await listeningUrl(warned);
  assert.match(warned.stderr(), /warning: METRICS_TOKEN holds an example secret/);
  warned.child.kill('SIGTERM');
  assert.equal(await warned.exited, 0);
});

test("the example provisioning file's secrets stop a start with NODE_ENV=production, naming the fields", async () => {
  const service = startService({
    NODE_ENV: 'production',
    PROVISION_FILE: example,
    SECRET_TOKEN: 'a-secret-token-of-my-own-9f8e7d',
    DATA_DIR: tempDir(),
    PORT: '0',
    MQTT_PORT: '0',
  });
  assert.equal(await service.exited, 2);
  assert.match(service.stderr(), /lockers\[0\]\.api_key, .*api_tokens\[0\]\.token.* holds an example secret .*NODE_ENV=production/);
  assert.ok(!service.stderr().includes(EXAMPLE_TOKEN));
});
