import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { AppError } from '../../src/http/errors.ts';
import { secretTokenAuth } from '../../src/http/auth.ts';
import { testApp, withSecret, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({
    failureLimit: { max: 5, windowMs: 60_000 },
    extend: (app, deps) => {
      app.get('/t/codes/:code', { onRequest: secretTokenAuth(deps.secretDigest) }, async (request) => {
        if ((request.params as { code: string }).code !== 'right') throw new AppError(404, 'not_found', 'no such code');
        return { ok: true };
      });
    },
  });
});

const from = (ip: string, url: string) => ctx.app.inject({ method: 'GET', url, remoteAddress: ip });

test('a client that keeps guessing is refused with 429 and Retry-After, others are not', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await from('10.1.0.1', withSecret(`/t/codes/guess${i}`))).statusCode, 404);
  for (let i = 0; i < 2; i++) assert.equal((await from('10.1.0.1', `/t/codes/right?secret_token=wrong${i}`)).statusCode, 401);
  const refused = await from('10.1.0.1', withSecret('/t/codes/right'));
  assert.equal(refused.statusCode, 429, 'even a right guess is refused once the budget is spent');
  assert.equal(refused.json().code, 'too_many_failures');
  assert.equal(refused.headers['retry-after'], '60');
  assert.equal((await from('10.1.0.2', withSecret('/t/codes/right'))).statusCode, 200, 'another client is served');
  ctx.clock.advance(60_000);
  assert.equal((await from('10.1.0.1', withSecret('/t/codes/right'))).statusCode, 200, 'served again after the window');
});

test('successful requests and unknown routes do not count', async () => {
  for (let i = 0; i < 20; i++) assert.equal((await from('10.2.0.1', withSecret('/t/codes/right'))).statusCode, 200);
  for (let i = 0; i < 10; i++) assert.equal((await from('10.2.0.1', '/no/such/route')).statusCode, 404);
  assert.equal((await from('10.2.0.1', withSecret('/t/codes/right'))).statusCode, 200);
});
