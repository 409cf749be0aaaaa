import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Type } from 'typebox';
import { AppError } from '../../src/http/errors.ts';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({
    extend: (app) => {
      app.post(
        '/t/echo',
        {
          schema: {
            body: Type.Object({
              n: Type.Integer(),
              kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
              items: Type.Optional(Type.Array(Type.Object({ key: Type.Integer() }))),
            }),
            querystring: Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1 })) }),
          },
        },
        async (request) => ({ body: request.body, query: request.query }),
      );
      app.get('/t/conflict', async () => {
        throw new AppError(409, 'cabinet_occupied', 'the cabinet has an open order');
      });
      app.get('/t/crash', async () => {
        throw new Error('secret internals');
      });
    },
  });
});

test('an unknown route is a 404 of the contract shape', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/api/nothing/here' });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message']);
  assert.equal(res.json().code, 'not_found');
});

test('a validation failure is a 422 with errors by field', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/t/echo', payload: { n: '5', kind: 'c', items: [{ key: 'x' }] } });
  assert.equal(res.statusCode, 422);
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(Object.keys(body.errors).sort(), ['items[0].key', 'kind', 'n']);
  assert.deepEqual(body.errors.n, ['must be an integer']);
});

test('a missing required field is named in errors', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/t/echo', payload: { kind: 'a' } });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json().errors, { n: ['is required'] });
});

test('query values are coerced, body values are not', async () => {
  const ok = await ctx.app.inject({ method: 'POST', url: '/t/echo?page=2', payload: { n: 5, kind: 'a', extra: 'ignored' } });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json().query, { page: 2 });
  const bad = await ctx.app.inject({ method: 'POST', url: '/t/echo?page=zero', payload: { n: 5, kind: 'a' } });
  assert.equal(bad.statusCode, 422);
  assert.ok(bad.json().errors.page);
});

test('malformed JSON is a 400, never a 5xx', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/t/echo', headers: { 'content-type': 'application/json' }, payload: '{"n": 5,' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().code, 'invalid_json');
});

test('a body over the limit is a 413', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/t/echo',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ n: 1, kind: 'a', pad: 'x'.repeat(1024 * 1024 + 10) }),
  });
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().code, 'body_too_large');
});

test('an unsupported content type is a 415', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/t/echo', headers: { 'content-type': 'text/csv' }, payload: 'n,kind' });
  assert.equal(res.statusCode, 415);
  assert.equal(res.json().code, 'unsupported_media_type');
});

test('an over-long path parameter or a malformed URL is refused in the contract shape', async () => {
  const long = await ctx.app.inject({ method: 'GET', url: `/api/lockers/locations/${'9'.repeat(500)}` });
  assert.equal(long.statusCode, 414);
  assert.deepEqual(long.json(), { message: 'a path parameter is too long', code: 'uri_too_long' });
  const bad = await ctx.app.inject({ method: 'GET', url: '/api/lockers/locations/%E0%A4%A' });
  assert.ok(bad.statusCode === 400 || bad.statusCode === 404, `status ${bad.statusCode}`);
  assert.ok(typeof bad.json().message === 'string' && typeof bad.json().code === 'string');
});

test('an AppError keeps its status and code', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/t/conflict' });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: 'the cabinet has an open order', code: 'cabinet_occupied' });
});

test('an unexpected failure is a 500 that shows nothing of the inside', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/t/crash' });
  assert.equal(res.statusCode, 500);
  assert.deepEqual(res.json(), { message: 'internal error', code: 'internal_error' });
});

test('liveness, readiness and the OpenAPI 3.1 document are served', async () => {
  assert.deepEqual((await ctx.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  assert.equal(ready.json().database, 'up');
  const doc = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(doc.statusCode, 200);
  assert.equal(doc.json().openapi, '3.1.0');
  const docs = await ctx.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(docs.statusCode, 200);
  assert.match(docs.headers['content-type'] as string, /text\/html/);
});
