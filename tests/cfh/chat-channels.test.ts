// Contract section 7 (version 3): a call button or display carries the chat channel its requests
// go to (provisioning: `chat_channel_id`), copied to each request it creates as `chat_channel_id`
// and `teams_channel_id`, so a chat integration can route it. Without one, both stay null.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { cfhClient, makeCfhWorld, press, type CfhWorld } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-07-01T09:00:00.000Z') });
});

/** The world's button and display again, as a file that gives them channels (or not) would. */
async function giveChannels(w: CfhWorld, button: string | null, display: string | null): Promise<void> {
  await applyProvisioning(ctx.db, ctx.clock, {
    call_buttons: [
      { id: w.buttonId, location_id: w.locationId, name: 'Paint counter', device_key: w.deviceKey, option_id: w.optionId, chat_channel_id: button },
    ],
    cfh_displays: [
      {
        id: w.displayId,
        location_id: w.locationId,
        name: 'Entrance QR',
        key: w.displayKey,
        option_ids: [w.optionId, w.secondOptionId],
        allow_custom_text: true,
        chat_channel_id: display,
      },
    ],
  });
}

async function channelsOf(w: CfhWorld, messageId: string): Promise<{ record: unknown[]; view: unknown }> {
  const listed = await ctx.app.inject({
    url: `/api/callforhelp/requests?location_id=${w.locationId}&state=all`,
    headers: { authorization: `Bearer ${w.token}` },
  });
  assert.equal(listed.statusCode, 200, listed.body);
  const record = listed.json<Record<string, unknown>[]>().find((r) => r.message_id === messageId);
  assert.ok(record, 'the request is listed');
  const view = (await cfhClient(ctx.app, w.token).track(messageId)).json<{ cfh_request: Record<string, unknown> }>().cfh_request;
  return { record: [record.chat_channel_id, record.teams_channel_id], view: view.teams_channel_id };
}

const displayRequest = (w: CfhWorld, ip: string) =>
  ctx.app.inject({ method: 'POST', url: `/api/callforhelp/displays/${w.displayKey}/requests`, payload: { option_id: w.optionId }, remoteAddress: ip });

test("a button press's request carries the button's chat channel as chat_channel_id and teams_channel_id", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  await giveChannels(w, '19:paint@thread', '19:front@thread');
  const res = await press(ctx.app, w.hubToken, { device_key: w.deviceKey });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(await channelsOf(w, res.body), { record: ['19:paint@thread', '19:paint@thread'], view: '19:paint@thread' });
});

test("a display's request (C9) carries the display's chat channel as chat_channel_id and teams_channel_id", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  await giveChannels(w, '19:paint@thread', '19:front@thread');
  const res = await displayRequest(w, '10.0.0.1');
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json<Record<string, unknown>>();
  assert.deepEqual([body.chat_channel_id, body.teams_channel_id], ['19:front@thread', '19:front@thread']);
  assert.deepEqual(await channelsOf(w, body.message_id as string), { record: ['19:front@thread', '19:front@thread'], view: '19:front@thread' });
});

test('a button or display without a chat channel creates requests with none, as before', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const pressed = await press(ctx.app, w.hubToken, { device_key: w.deviceKey });
  assert.equal(pressed.statusCode, 200, pressed.body);
  assert.deepEqual(await channelsOf(w, pressed.body), { record: [null, null], view: null });
  const shown = await displayRequest(w, '10.0.0.2');
  assert.equal(shown.statusCode, 201, shown.body);
  assert.deepEqual([shown.json().chat_channel_id, shown.json().teams_channel_id], [null, null]);
});

test("provisioning sets, keeps and clears a device's chat channel; applying the same file again changes nothing", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const stored = async () => ({
    button: (
      await ctx.db.query<{ chat_channel_id: string | null; updated_at: string }>('SELECT chat_channel_id, updated_at FROM call_buttons WHERE id = $1', [
        w.buttonId,
      ])
    )[0],
    display: (
      await ctx.db.query<{ chat_channel_id: string | null; updated_at: string }>('SELECT chat_channel_id, updated_at FROM cfh_displays WHERE id = $1', [
        w.displayId,
      ])
    )[0],
  });
  await giveChannels(w, '19:paint@thread', '19:front@thread');
  const set = await stored();
  assert.deepEqual([set.button?.chat_channel_id, set.display?.chat_channel_id], ['19:paint@thread', '19:front@thread']);
  ctx.clock.advance(1000);
  await giveChannels(w, '19:paint@thread', '19:front@thread');
  assert.deepEqual(await stored(), set, 'the same file again changes nothing');
  await giveChannels(w, null, null);
  const cleared = await stored();
  assert.deepEqual([cleared.button?.chat_channel_id, cleared.display?.chat_channel_id], [null, null]);
  const pressed = await press(ctx.app, w.hubToken, { device_key: w.deviceKey });
  assert.deepEqual(await channelsOf(w, pressed.body), { record: [null, null], view: null });
});
