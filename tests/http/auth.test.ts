import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { lockerByKey } from '../../src/devices/credentials.ts';
import { organizationOf } from '../../src/access/actor.ts';
import { actorOf, bearerAuth, lockerKeyAuth, secretTokenAuth } from '../../src/http/auth.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { makeWorld, provisionToken, TEST_SECRET, testApp, withSecret, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
let world: World;
before(async () => {
  ctx = await testApp({
    extend: (app, deps) => {
      app.get('/t/secret', { onRequest: secretTokenAuth(deps.secretDigest) }, async () => ({ ok: true }));
      app.get('/t/locker', { onRequest: lockerKeyAuth((apiKey) => lockerByKey(deps.db, apiKey)) }, async (request) => ({ locker: request.locker }));
      app.get('/t/cfh', { onRequest: bearerAuth(deps.apiTokens, 'cfh') }, async (request) => ({
        principal: { organizationId: organizationOf(actorOf(request)) },
      }));
      app.get('/t/radio', { onRequest: bearerAuth(deps.apiTokens, 'radio', { failStatus: 403 }) }, async () => ({ ok: true }));
    },
  });
  world = await makeWorld(ctx.db, ctx.clock);
});

const get = (url: string, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url, headers });

test('the shared secret token opens L1-L6 routes, and its absence or a wrong one is a 401', async () => {
  assert.equal((await get(withSecret('/t/secret'))).statusCode, 200);
  const missing = await get('/t/secret');
  assert.equal(missing.statusCode, 401);
  assert.equal(missing.json().code, 'unauthorized');
  assert.equal((await get(`/t/secret?secret_token=${TEST_SECRET}x`)).statusCode, 401);
  assert.equal((await get(`/t/secret?secret_token=${TEST_SECRET.slice(0, -1)}`)).statusCode, 401);
  assert.equal((await get('/t/secret?secret_token=')).statusCode, 401);
});

test("a locker's own api-key identifies it; an unknown or missing key is a 401", async () => {
  const ok = await get('/t/locker', { 'api-key': world.lockerKey });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json().locker, { id: world.lockerId, organizationId: world.organizationId, locationId: world.locationId, version: 2 });
  assert.equal((await get('/t/locker', { 'api-key': `${world.lockerKey}-nope` })).statusCode, 401);
  assert.equal((await get('/t/locker')).statusCode, 401);
});

test('a bearer token identifies its organization; missing or invalid is a 401 on CFH', async () => {
  const ok = await get('/t/cfh', { authorization: `Bearer ${world.token}` });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.json().principal.organizationId, world.organizationId);
  assert.equal((await get('/t/cfh')).statusCode, 401);
  assert.equal((await get('/t/cfh', { authorization: `Bearer ${world.token}x` })).statusCode, 401);
  assert.equal((await get('/t/cfh', { authorization: `Basic ${world.token}` })).statusCode, 401);
  assert.equal((await get('/t/radio', { authorization: 'Bearer nope' })).statusCode, 403, 'R1 refuses with 403');
});

test('a token without the scope is refused', async () => {
  const token = await provisionToken(ctx.db, ctx.clock, world.organizationId, ['radio']);
  const res = await get('/t/cfh', { authorization: `Bearer ${token}` });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().code, 'insufficient_scope');
  assert.equal((await get('/t/radio', { authorization: `Bearer ${token}` })).statusCode, 200);
});

test('an expired or revoked token is refused', async () => {
  const now = ctx.clock.now();
  const expired = await provisionToken(ctx.db, ctx.clock, world.organizationId, ['cfh'], { expiresAt: new Date(now.getTime() + 1000) });
  const revoked = await provisionToken(ctx.db, ctx.clock, world.organizationId, ['cfh'], { revoked: true });
  assert.equal((await get('/t/cfh', { authorization: `Bearer ${expired}` })).statusCode, 200, 'valid until it expires');
  ctx.clock.advance(1000);
  assert.equal((await get('/t/cfh', { authorization: `Bearer ${expired}` })).statusCode, 401);
  assert.equal((await get('/t/cfh', { authorization: `Bearer ${revoked}` })).statusCode, 401);
});

test('a token revoked while in use is refused within a second, and an unknown token is never remembered', async () => {
  const token = `revoked-in-use-token-${world.organizationId}-abcdefghijkl`;
  const auth = { authorization: `Bearer ${token}` };
  assert.equal((await get('/t/cfh', auth)).statusCode, 401, 'unknown yet');
  const name = `in-use-${world.organizationId}`;
  await applyProvisioning(ctx.db, ctx.clock, { api_tokens: [{ name, organization_id: world.organizationId, scopes: ['cfh'], token }] });
  assert.equal((await get('/t/cfh', auth)).statusCode, 200, 'accepted as soon as it exists');
  await ctx.db.query('UPDATE api_tokens SET revoked_at = $2 WHERE name = $1', [name, ctx.clock.now()]);
  ctx.clock.advance(1000);
  assert.equal((await get('/t/cfh', auth)).statusCode, 401, 'refused a second after its revocation');
});
