// `npm run people -- add-admin` against a running embedded install: the break-glass administrator's
// one-time password printed once, signing in with it, the forced change, and the refusals of a
// wrong organization or a wrong command (exit 2, nothing made).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { cleanupAll, dataDirIn, npmRun, root, startService, tempDir } from '../../scripts/lib/processes.ts';

after(cleanupAll);

test('npm run people -- add-admin prints a one-time password that signs in to a running service and must be changed first', async () => {
  const dataDir = dataDirIn(tempDir('storeops-people-'), 'data');
  const service = await startService('people', {
    DATA_DIR: dataDir,
    PROVISION_FILE: `${root}/examples/provision.json`,
    SECRET_TOKEN: 'people-cli-secret-token-0123456789',
  });
  const made = await npmRun('people', ['add-admin', 'Root@Example.com', '--organization', '1', '--name', 'Root Admin'], { DATA_DIR: dataDir });
  assert.equal(made.code, 0, made.out);
  const password = /one-time password, shown this once:\s+(\S+)/.exec(made.out)?.[1];
  assert.ok(password !== undefined && password.length === 20, made.out);

  const signIn = await fetch(`${service.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'root@example.com', password }),
  });
  assert.equal(signIn.status, 200);
  const session = (await signIn.json()) as { must_change_password: boolean; csrf_token: string; memberships: unknown };
  assert.equal(session.must_change_password, true);
  assert.deepEqual(session.memberships, [{ role: 'org_admin', organization_id: 1, location_ids: null }]);
  const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
  const changed = await fetch(`${service.url}/api/session/password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': session.csrf_token, origin: service.url },
    body: JSON.stringify({ current_password: password, new_password: 'my own long password' }),
  });
  assert.equal(changed.status, 200, await changed.clone().text());
  const queue = await fetch(`${service.url}/console/api/locations/10/queue`, { headers: { cookie } });
  assert.equal(queue.status, 200);

  const wrongOrganization = await npmRun('people', ['add-admin', 'x@example.com', '--organization', '99'], { DATA_DIR: dataDir });
  assert.equal(wrongOrganization.code, 2);
  assert.match(wrongOrganization.out, /organization 99 does not exist/);
  const wrongCommand = await npmRun('people', ['remove-everyone'], { DATA_DIR: dataDir });
  assert.equal(wrongCommand.code, 2);
  assert.match(wrongCommand.out, /usage: npm run people -- add-admin EMAIL --organization ID/);
  assert.equal(await service.stop(), 0);
});
