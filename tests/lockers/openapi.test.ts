import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedApp } from './helpers.ts';

const ctx = await sharedApp();

test('the OpenAPI document lists the seven locker operations with their paths, credentials and statuses', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json<{
    paths: Record<string, Record<string, { operationId: string; security: Record<string, unknown>[]; responses: Record<string, unknown> }>>;
  }>();
  const expected = [
    ['get', '/api/lockers/locations/{location_id}', 'getLocationLockers', 'secretToken', ['200', '401', '404', '422']],
    ['post', '/api/lockers/orders', 'createLockerOrder', 'secretToken', ['201', '401', '409', '422']],
    ['put', '/api/lockers/cabinets/{cabinet_id}', 'commandCabinet', 'secretToken', ['200', '401', '404', '422']],
    ['put', '/api/lockers/orders/cabinets/{cabinet_id}', 'completeCabinetOrder', 'secretToken', ['200', '401', '404', '422']],
    ['post', '/api/lockers/cabinets/customers/{open_code}', 'commandByOpenCode', 'secretToken', ['200', '401', '404', '422']],
    ['put', '/api/lockers/orders/customer/{open_code}', 'completeOrderByOpenCode', 'secretToken', ['200', '401', '404', '422']],
    ['post', '/api/lockers/cabinet/status', 'updateLockerStatus', 'lockerApiKey', ['200', '401', '422']],
  ] as const;
  for (const [method, path, operationId, scheme, statuses] of expected) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
    assert.equal(op.operationId, operationId);
    assert.deepEqual(op.security, [{ [scheme]: [] }]);
    for (const s of [...statuses, '429', '503']) assert.ok(op.responses[s], `${operationId} documents ${s}`);
  }
});
