// The service as a process: how a newcomer and an operator meet it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { example, listeningUrl, startService, tempDir } from './service-process.ts';

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
