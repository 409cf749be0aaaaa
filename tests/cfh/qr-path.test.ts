// The deployed system's printed QR codes point at /callforhelp/v1/display/CFH.<key>: a store that
// gives its display that key keeps its printed codes, which open the same page as /help/<key>.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testApp } from '../support/world.ts';
import { makeCfhWorld } from './support.ts';

const ctx = await testApp();
/** A page with its per-answer nonce blanked, to compare two answers. */
const sameness = (body: string) => body.replace(/nonce-?="?[A-Za-z0-9+/=]+"?/g, 'nonce').replace(/nonce="[^"]*"/g, 'nonce');

test("the deployed QR path CFH.<key> serves the display's page, the same as /help/<key>", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const printed = await ctx.app.inject({ url: `/callforhelp/v1/display/CFH.${w.displayKey}` });
  assert.equal(printed.statusCode, 200, printed.body);
  assert.match(String(printed.headers['content-type']), /^text\/html/);
  assert.match(String(printed.headers['content-security-policy']), /script-src 'nonce-/);
  const help = await ctx.app.inject({ url: `/help/${w.displayKey}` });
  assert.equal(sameness(printed.body), sameness(help.body));
  // The page's script asks C9 with the display's key, so choosing an option works from this path too.
  assert.ok(printed.body.includes(JSON.stringify(w.displayKey)));
});

test('the deployed QR path without the CFH. prefix, or with an unknown key, is the 404 page', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  for (const url of [
    `/callforhelp/v1/display/${w.displayKey}`,
    '/callforhelp/v1/display/CFH.nobody-has-this-display-key-000',
    '/callforhelp/v1/display/CFH.',
    '/callforhelp/v1/display/cfh.' + w.displayKey,
    '/callforhelp/v1/display/CFH.%00',
  ]) {
    const res = await ctx.app.inject({ url });
    assert.ok([400, 404].includes(res.statusCode), `${url}: ${res.statusCode}`);
  }
  const res = await ctx.app.inject({ url: '/callforhelp/v1/display/CFH.nobody-has-this-display-key-000' });
  assert.equal(res.statusCode, 404);
  assert.match(String(res.headers['content-type']), /^text\/html/);
});
