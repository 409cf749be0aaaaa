// Staff answering together: several "I'm on it" heard at once each claim a different open request
// (the oldest ones, in turn), never two on one request while another waits.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { TestDevice, waitUntil } from '../devices/device.ts';
import { makeWorld, testApp } from '../support/world.ts';

test('"I\'m on it" from four people at once claims four different requests', { timeout: 60_000 }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.events.runPending();
  const w = await makeWorld(ctx.db, ctx.clock);
  await applyProvisioning(ctx.db, ctx.clock, {
    radio_edges: [{ edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, voice_actions: true, announce_cfh: [] }],
  });
  for (let i = 0; i < 5; i++) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: { authorization: `Bearer ${w.token}` },
      payload: { location_id: w.locationId, option_id: w.optionId },
    });
    assert.equal(res.statusCode, 201);
    ctx.clock.advance(1_000);
  }
  // The radio's view of open requests is kept by its event subscriber; in the service it runs on
  // every commit, here by hand. It is not run again during the phrases: their view stays as stale
  // as it can be in the service between two commits.
  await waitUntil(async () => {
    await ctx.events.runPending();
    const [row] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM radio_open_requests WHERE location_id = $1', [w.locationId]);
    return row?.n === 5;
  });
  const edge = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  t.after(() => edge.client.end(true));
  const said = ['Ann', 'Bob', 'Cy', 'Dee'].map((speaker) => ({
    heard_id: crypto.randomUUID(),
    text: "I'm on it",
    speaker,
    heard_at: ctx.clock.now().toISOString(),
  }));
  await Promise.all(said.map((p) => edge.client.publishAsync(`radio/${w.edgeId}/heard`, JSON.stringify(p), { qos: 1 })));
  let rows: { outcome: string; cfh_request_id: number | null }[] = [];
  await waitUntil(async () => {
    rows = await ctx.db.query('SELECT outcome, cfh_request_id FROM radio_heard WHERE edge_id = $1', [w.edgeId]);
    return rows.length === 4 && rows.every((r) => r.outcome !== 'pending');
  });
  await ctx.devices.settle();
  assert.deepEqual(
    rows.map((r) => r.outcome),
    ['claimed', 'claimed', 'claimed', 'claimed'],
  );
  assert.equal(new Set(rows.map((r) => r.cfh_request_id)).size, 4, 'four different requests');
  const claimed = await ctx.db.query<{ claimed_by: string }>('SELECT claimed_by FROM cfh_requests WHERE location_id = $1 AND is_claimed ORDER BY id', [
    w.locationId,
  ]);
  assert.deepEqual(claimed.map((r) => r.claimed_by).sort(), ['Ann', 'Bob', 'Cy', 'Dee']);
  const [oldestUnclaimed] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cfh_requests WHERE location_id = $1 AND NOT is_claimed', [
    w.locationId,
  ]);
  assert.equal(oldestUnclaimed?.n, 1);
});
