// The brute-force guard's rules on a route of its own: failed credentials are counted per address
// and kind, only failures are refused, a valid credential always passes, capability routes count
// their 404s, and forwarded requests without TRUST_PROXY are warned about once.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { before, test } from 'node:test';
import Fastify from 'fastify';
import { ManualClock } from '../../src/clock.ts';
import { AppError } from '../../src/http/errors.ts';
import { secretTokenAuth } from '../../src/http/auth.ts';
import { registerFailureLimit } from '../../src/http/rate-limit.ts';
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
      app.get('/t/track/:id', { config: { capabilityRoute: true } }, async (request) => {
        if ((request.params as { id: string }).id !== 'known') throw new AppError(404, 'not_found', 'no such request');
        return { ok: true };
      });
    },
  });
});

const from = (ip: string, url: string) => ctx.app.inject({ method: 'GET', url, remoteAddress: ip });

test('a client that keeps failing its credential gets 429 and Retry-After for its failures, and is served with the right one', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await from('10.1.0.1', `/t/codes/right?secret_token=wrong${i}`)).statusCode, 401);
  const refused = await from('10.1.0.1', '/t/codes/right?secret_token=wrong-again');
  assert.equal(refused.statusCode, 429);
  assert.equal(refused.json().code, 'too_many_failures');
  assert.equal(typeof refused.json().message, 'string');
  assert.equal(refused.headers['retry-after'], '60');
  assert.equal((await from('10.1.0.1', withSecret('/t/codes/right'))).statusCode, 200, 'the valid secret is served from the same address');
  assert.equal((await from('10.1.0.2', '/t/codes/right?secret_token=wrong')).statusCode, 401, 'another client gets the plain refusal');
  ctx.clock.advance(60_000);
  assert.equal((await from('10.1.0.1', '/t/codes/right?secret_token=wrong')).statusCode, 401, 'a plain refusal again after the window');
});

test('successful requests, unknown routes and misses with a valid credential do not count', async () => {
  for (let i = 0; i < 20; i++) assert.equal((await from('10.2.0.1', withSecret('/t/codes/right'))).statusCode, 200);
  for (let i = 0; i < 10; i++) assert.equal((await from('10.2.0.1', '/no/such/route')).statusCode, 404);
  for (let i = 0; i < 60; i++) assert.equal((await from('10.2.0.1', withSecret(`/t/codes/gone-${i}`))).statusCode, 404);
  assert.equal((await from('10.2.0.1', '/t/codes/right?secret_token=wrong')).statusCode, 401, 'the budget is untouched');
});

test('on a capability route a 404 without any other credential is a failed guess, and the known capability still passes', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await from('10.3.0.1', `/t/track/guess-${i}`)).statusCode, 404);
  assert.equal((await from('10.3.0.1', '/t/track/guess-again')).statusCode, 429);
  assert.equal((await from('10.3.0.1', '/t/track/known')).statusCode, 200);
  assert.equal((await from('10.3.0.1', '/healthz')).statusCode, 200, 'health probes are never refused');
});

test('requests forwarded by a proxy while TRUST_PROXY is unset are warned about once', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = Fastify({ logger: { level: 'warn', stream: sink } });
  t.after(() => app.close());
  registerFailureLimit(app, new ManualClock(new Date()), undefined, { trustProxy: false });
  app.get('/x', async () => ({ ok: true }));
  for (let i = 0; i < 3; i++) await app.inject({ method: 'GET', url: '/x', headers: { 'x-forwarded-for': `192.0.2.${i}` } });
  const warnings = lines.filter((l) => l.includes('TRUST_PROXY'));
  assert.equal(warnings.length, 1, lines.join(''));
});
