// Input no honest client sends still gets a 4xx, never a 5xx.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withSecret } from '../support/world.ts';
import { assertError, assertInvalid, lockers, sharedApp } from './helpers.ts';

await sharedApp();

test('text holding the NUL character is refused with 422 and nothing is stored', async () => {
  const l = await lockers();
  await l.placeOrder(0);
  assertInvalid(await l.command(1, { command: 'resize', size: 'a\u0000b' }), 'size');
  assertInvalid(await l.command(0, { command: 'open', reason: 'a\u0000b' }), 'reason');
  assertInvalid(await l.command(0, { command: 'open', reason: 'x', order_id: 'a\u0000' }), 'order_id');
  assertInvalid(await l.status({ cabinets: [], locker_info: { firmware: '\u0000' } }), 'locker_info.firmware');
  assertInvalid(await l.status({ cabinets: [], event: { type: 'active\u0000' } }), 'event.type');
  assertInvalid(await l.status({ cabinets: [{ key: 1, front_status: 'open' }], event: { type: 'active', detail: { 'x\u0000': ['y'] } } }), 'event');
  assert.equal((await l.cabinet(0)).state, 'closed');
  assert.equal((await l.cabinet(1)).size, 'medium');
  // A backslash followed by "u0000" is ordinary text.
  assert.equal((await l.status({ cabinets: [], event: { type: 'active', detail: '\\u0000' } })).statusCode, 200);
});

test('an open code that cannot be one is 404, like any unknown code', async () => {
  const l = await lockers();
  for (const code of ['ab%00cd', 'a%20b', '%E2%9C%93', 'x'.repeat(99)]) {
    assertError(
      await l.ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/cabinets/customers/${code}`), payload: { command: 'agree' } }),
      404,
      'not_found',
    );
    assertError(await l.ctx.app.inject({ method: 'PUT', url: withSecret(`/api/lockers/orders/customer/${code}`), payload: {} }), 404, 'not_found');
  }
});

test('a body that is not JSON is 400, one of the wrong shape 422', async () => {
  const l = await lockers();
  const bad = await l.ctx.app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    headers: { 'content-type': 'application/json' },
    body: '{"rearload": tru',
  });
  assertError(bad, 400, 'invalid_json');
  assertInvalid(await l.ctx.app.inject({ method: 'POST', url: withSecret('/api/lockers/orders'), payload: [1, 2] }), '(root)');
  assertInvalid(await l.status({ cabinets: 'all' }), 'cabinets');
  assertInvalid(await l.status({ cabinets: [{ key: 2 ** 40, front_status: 'open' }] }), 'cabinets[0].key');
});
