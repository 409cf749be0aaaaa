// A person who opens the service's address in a browser finds where to go, not a JSON 404.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../support/world.ts';

const ctx = await testApp();

test('GET / is a page that links to the console, the API reference and the health probe', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  const links = [...res.body.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(links, ['/console', '/docs', '/openapi.json', '/healthz', '/readyz']);
  // Each link leads somewhere that answers.
  for (const link of links) assert.equal((await ctx.app.inject({ method: 'GET', url: link })).statusCode < 400, true, link);
});

test('HEAD / answers like GET / without a body, and the page is left out of the OpenAPI document', async () => {
  const res = await ctx.app.inject({ method: 'HEAD', url: '/' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>();
  assert.equal(doc.paths['/'], undefined);
});
