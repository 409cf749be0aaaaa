// P3 (contract section 16) over orders made through the API with known answers: each order on its
// creation day with what became of it, times to ready and to pickup, and cabinet occupancy.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { testApp, withSecret, type TestContext } from '../support/world.ts';
import { report, reportWorld } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-02-01T10:00:00.000Z') });
});

test('P3: orders per creation day (completed, canceled, expired), time to ready and to pickup, occupancy', async () => {
  const w = await reportWorld(ctx, { pickupHours: 1 });
  const at = (iso: string) => ctx.clock.set(iso);
  const put = (url: string, payload?: object) => ctx.app.inject({ method: 'PUT', url: withSecret(url), ...(payload ? { payload } : {}) });
  const order = async (cabinet: number, orderId: number) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: withSecret('/api/lockers/orders'),
      payload: {
        rearload: false,
        locker_id: w.lockerId,
        cabinet_id: w.cabinetIds[cabinet],
        order_id: orderId,
        organization_id: w.organizationId,
        location_id: w.locationId,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number; open_code: string }>();
  };
  const ready = async (cabinet: number) => {
    assert.equal((await put(`/api/lockers/cabinets/${w.cabinetIds[cabinet]}`, { command: 'open', reason: 'loading' })).statusCode, 200);
    assert.equal((await put(`/api/lockers/cabinets/${w.cabinetIds[cabinet]}`, { command: 'close' })).statusCode, 200);
  };

  at('2026-02-01T10:00:00.000Z');
  const one = await order(0, 1);
  at('2026-02-01T10:10:00.000Z');
  await ready(0);
  at('2026-02-01T10:50:00.000Z');
  assert.equal((await put(`/api/lockers/orders/customer/${one.open_code}`)).statusCode, 200);
  at('2026-02-01T12:00:00.000Z');
  const two = await order(1, 2);
  at('2026-02-01T12:30:00.000Z');
  assert.equal((await ctx.app.inject({ method: 'POST', url: withSecret(`/api/lockers/orders/${two.id}/cancel`) })).statusCode, 200);
  at('2026-02-02T09:00:00.000Z');
  await order(2, 3);
  at('2026-02-02T09:20:00.000Z');
  await ready(2);
  at('2026-02-02T10:00:01.000Z');
  await ctx.scheduler.runDue(); // the third expires, and keeps its cabinet
  at('2026-02-04T00:00:00.000Z');

  const res = await report(ctx.app, w.reports, 'lockers', { location_id: w.locationId, from: '2026-02-01', to: '2026-02-03' });
  assert.equal(res.statusCode, 200, res.body);
  // Held: 50 min + 30 min + 39 h of 3 cabinets over 72 h.
  const occupancy = Math.round((((50 + 30) * 60 + 39 * 3600) / (3 * 72 * 3600)) * 10_000) / 10_000;
  assert.deepEqual(res.json(), {
    location_id: w.locationId,
    from: '2026-02-01',
    to: '2026-02-03',
    per_day: [
      { day: '2026-02-01', orders: 2, completed: 1, expired: 0, canceled: 1 },
      { day: '2026-02-02', orders: 1, completed: 0, expired: 1, canceled: 0 },
      { day: '2026-02-03', orders: 0, completed: 0, expired: 0, canceled: 0 },
    ],
    time_to_ready: { median_s: 900, p90_s: 1140 },
    time_to_pickup: { median_s: 3000, p90_s: 3000 },
    occupancy,
  });

  // A range that is still going counts time up to now only; one wholly ahead has no occupancy.
  at('2026-02-02T00:00:00.000Z');
  const partial = (await report(ctx.app, w.reports, 'lockers', { location_id: w.locationId, from: '2026-02-01', to: '2026-02-03' })).json();
  assert.equal(partial.occupancy, Math.round(((80 * 60) / (3 * 24 * 3600)) * 10_000) / 10_000);
  const ahead = (await report(ctx.app, w.reports, 'lockers', { location_id: w.locationId, from: '2026-03-01', to: '2026-03-01' })).json();
  assert.equal(ahead.occupancy, null);
  assert.deepEqual(ahead.time_to_ready, { median_s: null, p90_s: null });
});
