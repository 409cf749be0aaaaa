// A JSON operation sent a form or plain text (what `curl -d` sends without a content type) says what
// it takes, instead of listing every field as missing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, TEST_SECRET, testApp } from '../support/world.ts';

test('a form-encoded body to a JSON operation is 415 naming application/json', async (t) => {
  const ctx = await testApp({ t });
  const world = await makeWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/lockers/orders?secret_token=${TEST_SECRET}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `{"rearload":false,"locker_id":${world.lockerId}}`,
  });
  assert.equal(res.statusCode, 415);
  assert.equal(res.json().code, 'unsupported_media_type');
  assert.match(res.json().message, /takes application\/json/);
});

test('a plain-text body to a JSON operation is 415, with a bearer token too', async (t) => {
  const ctx = await testApp({ t });
  const world = await makeWorld(ctx.db, ctx.clock);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${world.token}`, 'content-type': 'text/plain' },
    payload: JSON.stringify({ location_id: world.locationId, option_id: world.optionId }),
  });
  assert.equal(res.statusCode, 415);
  assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message']);
  assert.match(res.json().message, /application\/json/);
});

test('JSON with a charset parameter is still taken', async (t) => {
  const ctx = await testApp({ t });
  const world = await makeWorld(ctx.db, ctx.clock);
  for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': type },
      payload: JSON.stringify({ location_id: world.locationId, option_id: world.optionId }),
    });
    assert.notEqual(res.statusCode, 415, type);
  }
});
