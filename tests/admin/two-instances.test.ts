// Section 18 live on every instance: what an administrator changes on instance A is what instance B
// does at its very next request (B reads the setup from the database on each request; nothing of it
// is cached): a new button's first press, a retired button refused, a rotated locker key refused, a
// new location in B's console.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { otherInstanceDb, testApp } from '../support/world.ts';
import { bearer, call, ifMatch, mac, press, sessionOf, setupWorld } from './support.ts';

test('a change made on instance A is what instance B does at its next request', async (t) => {
  const a = await testApp({ t });
  const b = await testApp({ t, db: await otherInstanceDb() });
  const w = await setupWorld(a.db, a.clock);
  const admin = await sessionOf(a.app, w.admin);
  const key = mac();
  const made = await call(a.app, admin, 'POST', '/api/admin/call_buttons', { location_id: w.locationId, name: 'New', device_key: key, option_id: w.optionId });
  assert.equal(made.statusCode, 201, made.body);
  const first = await press(b.app, w.hubToken, key);
  assert.equal(first.statusCode, 200, first.body);
  const requests = await b.app.inject({ url: `/api/callforhelp/requests?location_id=${w.locationId}`, headers: { authorization: `Bearer ${w.token}` } });
  assert.ok(requests.body.includes(first.body.trim()), 'the press is a request B lists');

  await call(a.app, admin, 'PATCH', `/api/admin/call_buttons/${made.json().id}`, { enabled: false }, ifMatch(1));
  a.clock.advance(3_600_000);
  b.clock.advance(3_600_000);
  assert.equal((await press(b.app, w.hubToken, key)).statusCode, 404);

  const report = (key: string) => b.app.inject({ method: 'POST', url: '/api/lockers/cabinet/status', headers: { 'api-key': key }, payload: { cabinets: [] } });
  const locker = await call(a.app, bearer(w.adminToken), 'POST', '/api/admin/lockers', { location_id: w.locationId, name: 'L', cabinets: [{ key: 1 }] });
  assert.notEqual((await report(locker.json().api_key)).statusCode, 401);
  const rotated = await call(a.app, bearer(w.adminToken), 'POST', `/api/admin/lockers/${locker.json().id}/key?version=1`);
  assert.equal((await report(locker.json().api_key)).statusCode, 401);
  assert.notEqual((await report(rotated.json().api_key)).statusCode, 401);

  const store = await call(a.app, admin, 'POST', '/api/admin/locations', { name: 'Opened today' });
  const onB = await call(b.app, await sessionOf(b.app, w.admin), 'GET', '/api/admin/locations');
  assert.ok((onB.json() as { id: number }[]).some((l) => l.id === store.json().id));
});
