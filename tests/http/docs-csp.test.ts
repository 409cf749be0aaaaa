// The API reference's pages (/docs) carry a Content-Security-Policy of their own scripts and styles
// only, never framed (issue 36, item 11).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

test('every page and file of /docs carries a Content-Security-Policy of its own origin, never framed', async () => {
  for (const url of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-initializer.js']) {
    const res = await ctx.app.inject({ method: 'GET', url });
    assert.ok(res.statusCode < 400, `${url}: ${res.statusCode}`);
    const csp = String(res.headers['content-security-policy'] ?? '');
    assert.match(csp, /default-src 'self'/, url);
    assert.match(csp, /frame-ancestors 'none'/, url);
    assert.match(csp, /object-src 'none'/, url);
    assert.doesNotMatch(csp, /https:|unsafe-inline|unsafe-eval|upgrade-insecure-requests|validator\.swagger\.io/, url);
  }
});
