// The console's front end is served exactly as its sources in src/console/web (no build step), with
// a Content-Security-Policy that lets nothing but the service's own files run, and ETags.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { WEB_DIR } from '../../src/console/static.ts';
import { testApp } from '../support/world.ts';

function sources(dir = WEB_DIR, sub = ''): string[] {
  return fs
    .readdirSync(path.join(dir, sub), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sources(dir, `${sub}${e.name}/`) : [`${sub}${e.name}`]));
}

test('every front-end file is served byte for byte as its source, with a CSP and an ETag', async (t) => {
  const ctx = await testApp({ t });
  const files = sources();
  assert.ok(files.includes('app.js') && files.includes('index.html') && files.includes('style.css'));
  for (const file of files) {
    const res = await ctx.app.inject({ method: 'GET', url: `/console/assets/${file}` });
    assert.equal(res.statusCode, 200, file);
    assert.deepEqual(res.rawPayload, fs.readFileSync(path.join(WEB_DIR, file)), file);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self';/);
    const again = await ctx.app.inject({ method: 'GET', url: `/console/assets/${file}`, headers: { 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304, file);
  }
  const page = await ctx.app.inject({ method: 'GET', url: '/console' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.deepEqual(page.rawPayload, fs.readFileSync(path.join(WEB_DIR, 'index.html')));
  assert.equal(page.headers['x-frame-options'], 'DENY');
});

test('no front-end file writes HTML from strings (innerHTML and the like), so stored text cannot become markup', () => {
  for (const file of sources().filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(WEB_DIR, file), 'utf8');
    assert.doesNotMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, file);
  }
});

test('unknown asset paths are 404 in the contract shape', async (t) => {
  const ctx = await testApp({ t });
  for (const url of ['/console/assets/nope.js', '/console/assets/../routes.ts', '/console/assets/%2e%2e/routes.ts']) {
    const res = await ctx.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.json().code, 'not_found');
  }
});
