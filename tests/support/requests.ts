// Requests that set a test's world up, as a client makes them: an order in a cabinet (L2), open
// Call for Help requests (C0). Each must succeed.
import assert from 'node:assert/strict';
import type { App } from '../../src/app.ts';
import { withSecret, type World } from './world.ts';

/** Places order `orderId` in the world's cabinet of index `cabinet`; returns its open code. */
export async function placeOrder(app: App, world: World, cabinet = 0, orderId = 1): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: withSecret('/api/lockers/orders'),
    payload: {
      rearload: false,
      locker_id: world.lockerId,
      cabinet_id: world.cabinetIds[cabinet],
      order_id: orderId,
      organization_id: world.organizationId,
      location_id: world.locationId,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ open_code: string }>().open_code;
}

/** Opens `n` CFH requests with the world's token; returns their message ids. */
export async function openCfhRequests(app: App, world: World, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${world.token}` },
      payload: { location_id: world.locationId, option_id: world.optionId },
    });
    assert.equal(res.statusCode, 201, res.body);
    ids.push(res.json<{ message_id: string }>().message_id);
  }
  return ids;
}

/** Opens one CFH request with the world's token; returns its message id. */
export async function openCfhRequest(app: App, world: World): Promise<string> {
  return (await openCfhRequests(app, world, 1))[0] as string;
}

/** Cancels a CFH request with the world's token (C3). */
export async function cancelCfhRequest(app: App, world: World, messageId: string): Promise<void> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/callforhelp/cancel',
    headers: { authorization: `Bearer ${world.token}` },
    payload: { message_id: messageId },
  });
  assert.equal(res.statusCode, 200, res.body);
}
