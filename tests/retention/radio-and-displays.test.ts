// Retention of what the radio's voice actions and the displays leave behind (src/retention): speech
// heard on the air, voice actions' view of open requests, and displays' last press per client
// address go once older than the window; newer ones stay, and so do the requests themselves.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { Retention } from '../../src/retention/retention.ts';
import { cfhClient, makeCfhWorld, type CfhWorld } from '../cfh/support.ts';
import { TestDevice, waitUntil } from '../devices/device.ts';
import { countRows } from './support.ts';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-04-01T10:00:00.000Z') });
  await ctx.events.runPending(); // the radio's subscribers start at the end of the log
});

/** What a day at the store leaves in the three tables: a request (in the voice actions' view), a
 * phrase heard on the radio, a display press from a phone. */
async function aDay(w: CfhWorld, ip: string): Promise<string> {
  const created = await cfhClient(ctx.app, w.token).create({ location_id: w.locationId, option_id: w.optionId });
  assert.equal(created.statusCode, 201, created.body);
  const display = await ctx.app.inject({
    method: 'POST',
    url: `/api/callforhelp/displays/${w.displayKey}/requests`,
    payload: { option_id: w.optionId },
    remoteAddress: ip,
  });
  assert.equal(display.statusCode, 201, display.body);
  // On PostgreSQL the log is read once no older transaction runs: read it until the view has it.
  await waitUntil(async () => {
    await ctx.events.runPending();
    return (await countRows(ctx.db, 'radio_open_requests WHERE message_id = $1', [created.json().message_id])) === 1;
  });
  const edge = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  const heardId = crypto.randomUUID();
  try {
    await edge.client.publishAsync(
      `radio/${w.edgeId}/heard`,
      JSON.stringify({ heard_id: heardId, text: 'Anyone seen the mop?', heard_at: ctx.clock.now().toISOString() }),
      { qos: 1 },
    );
    await waitUntil(async () => (await countRows(ctx.db, 'radio_heard WHERE edge_id = $1 AND heard_id = $2', [w.edgeId, heardId])) === 1);
    await ctx.devices.settle();
  } finally {
    await edge.end();
  }
  return created.json().message_id as string;
}

test("heard speech, voice actions' stale open requests and displays' old presses go after the window; newer ones and the requests stay", async () => {
  // Two stores: a display's own next press already replaces its other clients' old presses, so
  // what retention is for is a display nobody uses any more.
  const was = await makeCfhWorld(ctx.db, ctx.clock);
  const old = await aDay(was, '10.1.0.1');
  ctx.clock.set('2026-04-03T10:00:00.000Z');
  const is = await makeCfhWorld(ctx.db, ctx.clock);
  const recent = await aDay(is, '10.1.0.2');
  const heard = (w: CfhWorld) => countRows(ctx.db, 'radio_heard WHERE edge_id = $1', [w.edgeId]);
  const presses = (w: CfhWorld) => countRows(ctx.db, 'cfh_display_presses WHERE display_id = $1', [w.displayId]);
  assert.deepEqual([await heard(was), await heard(is), await presses(was), await presses(is)], [1, 1, 1, 1]);

  const retention = new Retention({
    db: ctx.db,
    clock: ctx.clock,
    retentionDays: 1,
    batchSize: 1,
    countDeleted: () => undefined,
    onError: (err) => {
      throw err;
    },
  });
  const deleted = await retention.runNow();
  assert.ok(deleted.radio_heard >= 1 && deleted.radio_open_requests >= 1 && deleted.display_presses >= 1, JSON.stringify(deleted));
  assert.deepEqual([await heard(was), await heard(is)], [0, 1], 'the newer phrase stays');
  assert.equal(await countRows(ctx.db, 'radio_open_requests WHERE message_id = $1', [old]), 0, 'a request open longer than the window leaves the view');
  assert.equal(await countRows(ctx.db, 'radio_open_requests WHERE message_id = $1', [recent]), 1);
  assert.deepEqual([await presses(was), await presses(is)], [0, 1], 'the newer press stays');
  assert.equal(await countRows(ctx.db, 'cfh_requests WHERE location_id = ANY ($1::int[])', [[was.locationId, is.locationId]]), 4, 'requests are kept');
});

test('a window in seconds (RETENTION_TEST_SECONDS, soaks only) replaces the days', async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  await aDay(w, '10.2.0.1');
  ctx.clock.advance(120_000);
  const keep = new Retention({
    db: ctx.db,
    clock: ctx.clock,
    retentionDays: 1,
    windowMs: 300_000,
    countDeleted: () => undefined,
    onError: (err) => {
      throw err;
    },
  });
  await keep.runNow();
  assert.equal(await countRows(ctx.db, 'radio_heard WHERE edge_id = $1', [w.edgeId]), 1, 'two minutes old, within five');
  ctx.clock.advance(240_000);
  await keep.runNow();
  assert.equal(await countRows(ctx.db, 'radio_heard WHERE edge_id = $1', [w.edgeId]), 0, 'six minutes old');
});

test("a closed display request's browser digest is forgotten at the next sweep; an open one's stays, still answered to its browser", async () => {
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const c9 = (browser: string) =>
    ctx.app.inject({
      method: 'POST',
      url: `/api/callforhelp/displays/${w.displayKey}/requests`,
      payload: { option_id: w.optionId, browser_id: browser },
      remoteAddress: '10.3.0.1',
    });
  const [closing, staying] = [crypto.randomBytes(16).toString('base64url'), crypto.randomBytes(16).toString('base64url')];
  const closed = (await c9(closing)).json<{ message_id: string }>().message_id;
  const open = (await c9(staying)).json<{ message_id: string }>().message_id;
  assert.equal((await cfhClient(ctx.app, null).cancel(closed)).statusCode, 200);
  const digested = (messageId: string) => countRows(ctx.db, 'cfh_requests WHERE message_id = $1 AND browser_digest IS NOT NULL', [messageId]);
  assert.deepEqual([await digested(closed), await digested(open)], [1, 1]);

  const retention = new Retention({
    db: ctx.db,
    clock: ctx.clock,
    retentionDays: 90,
    countDeleted: () => undefined,
    onError: (err) => {
      throw err;
    },
  });
  const done = await retention.runNow();
  assert.ok(done.browser_digests >= 1, JSON.stringify(done));
  assert.deepEqual([await digested(closed), await digested(open)], [0, 1]);
  const again = await c9(staying);
  assert.deepEqual([again.statusCode, again.json<{ message_id: string }>().message_id], [200, open], 'the open request is still its browser’s');
});
