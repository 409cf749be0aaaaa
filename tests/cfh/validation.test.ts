import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, testApp, type TestContext } from '../support/world.ts';
import { ann, cfhClient, createRequest, success } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

function assert422(res: { statusCode: number; body: string; json(): { code: string; message: string; errors: Record<string, string[]> } }, fields: string[]) {
  assert.equal(res.statusCode, 422, res.body);
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(Object.keys(body.errors).sort(), [...fields].sort(), res.body);
}

test('an option of the whole organization (no location) serves every location; one of another location does not', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const otherLocation = freshId();
  const everywhere = freshId();
  const elsewhere = freshId();
  const text = { text_en: 'Price check', text_fr: 'Vérification de prix', prompt_en: 'On it', prompt_fr: "On s'en occupe" };
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: otherLocation, organization_id: w.organizationId, name: 'Store B' }],
    cfh_options: [
      { id: everywhere, organization_id: w.organizationId, location_id: null, ...text },
      { id: elsewhere, organization_id: w.organizationId, location_id: otherLocation, ...text },
    ],
  });
  const client = cfhClient(ctx.app, w.token);
  const created = await createRequest(client, { location_id: w.locationId, option_id: everywhere });
  const view = (await client.track(created.message_id)).json();
  assert.deepEqual(
    { ...view.option, created_at: undefined, updated_at: undefined },
    {
      id: everywhere,
      organization_id: w.organizationId,
      location_id: null,
      ...text,
      created_at: undefined,
      updated_at: undefined,
    },
  );
  assert422(await client.create({ location_id: w.locationId, option_id: elsewhere }), ['option_id']);
  assert.equal((await client.create({ location_id: otherLocation, option_id: elsewhere })).statusCode, 201);
  assert422(await client.create({ location_id: freshId(), option_id: w.optionId }), ['location_id', 'option_id']);
});

test('C0 refuses missing ids, wrong types and ids out of range with 422, never a 5xx', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  assert422(await client.create({}), ['location_id', 'option_id']);
  assert422(await client.create({ location_id: String(w.locationId), option_id: w.optionId }), ['location_id']);
  assert422(await client.create({ location_id: w.locationId, option_id: 2 ** 31 }), ['option_id']);
  assert422(await client.create({ location_id: w.locationId, option_id: 1.5 }), ['option_id']);
  assert422(await client.create({ location_id: w.locationId, option_id: w.optionId, device_id: 'kiosk-1' }), ['device_id']);
  assert422(await client.create({ location_id: w.locationId, option_id: w.optionId, display_id: -1, callbutton_id: 2 ** 40 }), ['callbutton_id', 'display_id']);
  assert422(await client.create({ location_id: w.locationId, option_id: w.optionId, chat_channel_id: 12 }), ['chat_channel_id']);
  const array = await ctx.app.inject({ method: 'POST', url: '/api/callforhelp/requests', headers: { authorization: `Bearer ${w.token}` }, payload: [1, 2] });
  assert.equal(array.statusCode, 422, array.body);
  const broken = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    payload: '{"location_id": ',
  });
  assert.equal(broken.statusCode, 400, broken.body);
  assert.equal(broken.json().code, 'invalid_json');
});

test('C1-C3 need message_id, channel_id, claimed_by and claimed_by_user_id; request_from is one of four', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const { message_id } = await createRequest(client, { location_id: w.locationId, option_id: w.optionId });
  for (const path of ['claim', 'on_the_way', 'complete']) {
    const extra = path === 'complete' ? { customer_status: 'not_interested' } : {};
    assert422(await client.post(path, { ...extra }), ['message_id', 'channel_id', 'claimed_by', 'claimed_by_user_id']);
    assert422(await client.post(path, { message_id, ...ann, ...extra, request_from: 'carrier_pigeon' }), ['request_from']);
    assert422(await client.post(path, { message_id, ...ann, ...extra, claimed_by_user_id: 42 }), ['claimed_by_user_id']);
    assert422(await client.post(path, { message_id: '', ...ann, ...extra }), ['message_id']);
    assert422(await client.post(path, { message_id: 'x'.repeat(65), ...ann, ...extra }), ['message_id']);
  }
  assert422(await client.post('complete', { message_id, ...ann }), ['customer_status']);
  assert422(await client.post('cancel', {}), ['message_id']);
  const noQuery = await ctx.app.inject({ url: '/api/callforhelp/v1/tracking', headers: { authorization: `Bearer ${w.token}` } });
  assert422(noQuery, ['message_id']);
  // None of those touched the request.
  assert.equal(success(await client.claim(message_id, ann)), true);
});

test('unknown body fields are ignored', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const created = await createRequest(client, { location_id: w.locationId, option_id: w.optionId, is_claimed: true, organization_id: 1, color: 'red' });
  assert.equal(created.is_claimed, false);
  assert.equal(created.organization_id, w.organizationId);
  assert.equal(success(await client.claim(created.message_id, { ...ann, ...{ mood: 'happy' } })), true);
});

test('every operation is in the OpenAPI document with its operationId, the bearer scheme and its statuses', async () => {
  const doc = (await ctx.app.inject({ url: '/openapi.json' })).json();
  const expected: [string, string, string, string[]][] = [
    ['/api/callforhelp/requests', 'post', 'createCfhRequest', ['201', '401', '403', '422']],
    ['/api/callforhelp/claim', 'post', 'claimCfhRequest', ['200', '401', '403', '404', '422']],
    ['/api/callforhelp/on_the_way', 'post', 'markCfhOnTheWay', ['200', '401', '403', '404', '422']],
    ['/api/callforhelp/complete', 'post', 'completeCfhRequest', ['200', '401', '403', '404', '422']],
    ['/api/callforhelp/cancel', 'post', 'cancelCfhRequest', ['200', '401', '403', '404', '409', '422']],
    ['/api/callforhelp/v1/tracking', 'get', 'getCfhRequest', ['200', '401', '403', '404', '422']],
  ];
  for (const [path, method, operationId, statuses] of expected) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path}`);
    assert.equal(op.operationId, operationId);
    // The customer's operations also take no credential (the message_id is one): contract section 9.
    const customers = operationId === 'cancelCfhRequest' || operationId === 'getCfhRequest';
    assert.deepEqual(op.security, customers ? [{ bearerToken: [] }, {}] : [{ bearerToken: [] }]);
    const common = method === 'post' ? ['400', '413', '415', '429', '503'] : ['429', '503'];
    assert.deepEqual(Object.keys(op.responses).sort(), [...statuses, ...common].sort());
  }
});
