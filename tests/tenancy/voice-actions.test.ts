// Voice actions across edge devices (contract sections 6 and 12): an edge device logged in with its
// own key may publish only on its own heard topic. What it publishes on another edge device's
// (of another organization, or of its own) is never recorded there and claims nothing there; what
// it says on its own topic acts only on its own location.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { TestDevice, waitUntil } from '../devices/device.ts';
import { makeWorld, testApp, TEST_MQTT_URL, type World } from '../support/world.ts';

const skip = TEST_MQTT_URL !== null && "the external test broker is anonymous, without our HTTP auth plugin (its ACL is the operator's)";

test("an edge device's phrase on another edge device's heard topic is dropped: nothing recorded, nothing claimed", { skip, timeout: 60_000 }, async (t) => {
  const ctx = await testApp({ t });
  await ctx.events.runPending();
  const withActions = async (): Promise<World> => {
    const w = await makeWorld(ctx.db, ctx.clock);
    await applyProvisioning(ctx.db, ctx.clock, {
      radio_edges: [{ edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, voice_actions: true }],
    });
    return w;
  };
  const victim = await withActions();
  const intruder = await withActions();
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${victim.token}` },
    payload: { location_id: victim.locationId, option_id: victim.optionId },
  });
  assert.equal(created.statusCode, 201);
  const messageId = created.json<{ message_id: string }>().message_id;
  await ctx.events.runPending();

  const edge = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${intruder.edgeId}`, password: intruder.edgeKey });
  const forged = { heard_id: crypto.randomUUID(), text: "I'm on it", speaker: 'Mallory', heard_at: ctx.clock.now().toISOString() };
  // The broker refuses the publish (QoS 1 without an ack, or a disconnect): either way it never lands.
  await Promise.race([
    edge.client.publishAsync(`radio/${victim.edgeId}/heard`, JSON.stringify(forged), { qos: 1 }).catch(() => undefined),
    new Promise((r) => setTimeout(r, 500)),
  ]);
  edge.client.end(true);
  // Its own topic works (heard is being read), so the forged one was not lost to a dead connection.
  const mine = { heard_id: crypto.randomUUID(), text: 'checking in', heard_at: ctx.clock.now().toISOString() };
  const own = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${intruder.edgeId}`, password: intruder.edgeKey });
  t.after(() => own.client.end(true));
  await own.client.publishAsync(`radio/${intruder.edgeId}/heard`, JSON.stringify(mine), { qos: 1 });
  await waitUntil(
    async () => (await ctx.db.query('SELECT 1 FROM radio_heard WHERE edge_id = $1 AND heard_id = $2', [intruder.edgeId, mine.heard_id])).length === 1,
  );
  await ctx.events.runPending();

  assert.deepEqual(
    await ctx.db.query('SELECT heard_id FROM radio_heard WHERE edge_id = $1', [victim.edgeId]),
    [],
    "nothing recorded as the other edge device's",
  );
  assert.deepEqual(await ctx.db.query('SELECT heard_id FROM radio_heard WHERE heard_id = $1', [forged.heard_id]), []);
  const [row] = await ctx.db.query<{ is_claimed: boolean }>('SELECT is_claimed FROM cfh_requests WHERE message_id = $1', [messageId]);
  assert.equal(row?.is_claimed, false, "the other location's request is not claimed");
});
