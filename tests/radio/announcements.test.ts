// Announcements of Call for Help (contract section 12): each edge device of the location says the
// statuses in its announce_cfh, in the location's language; an escalation is urgent; several
// statuses of one request within a few seconds say only the latest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { cancelCfhRequest, openCfhRequest } from '../support/requests.ts';
import { recordEvents } from '../support/events.ts';
import { makeWorld, testApp, type World } from '../support/world.ts';
import { assertSpeechWav } from './audio.ts';
import { outboxPlay } from './support.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;
// The subscriber starts at the end of the log: start it before any request of these tests.
await ctx.events.runPending();

interface Announcement {
  message_id: string;
  text: string;
  priority: string;
  cfh_status: string;
  source: string;
}

async function announcements(d: Db, edgeId: string): Promise<Announcement[]> {
  return d.query<Announcement>(
    `SELECT message_id, spoken_text AS text, priority, cfh_status, source FROM radio_messages
     WHERE edge_id = $1 AND source = 'announcement' ORDER BY id`,
    [edgeId],
  );
}

/** Are events still unread by the announcements subscriber? (On PostgreSQL a transaction of another
 * test file still running holds back the log's readers until it ends.) */
async function unread(): Promise<boolean> {
  const [row] = await db.query<{ unread: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM events e, event_cursors c
       WHERE c.subscriber = 'radio-announcements' AND e.type = 'callforhelp' AND (e.tx_id, e.id) > (c.tx_id, c.event_id)
         AND e.organization_id = ANY ($1::int[])) AS unread`,
    [worlds],
  );
  return row?.unread === true;
}

const worlds: number[] = [];

/** What happens after a change: the subscriber asks, and the job runs once its few seconds passed. */
async function settle(): Promise<void> {
  await ctx.events.runPending();
  while (await unread()) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    await ctx.events.runPending();
  }
  clock.advance(3_500);
  await ctx.scheduler.runDue();
}

async function world(): Promise<World> {
  const w = await makeWorld(db, clock);
  worlds.push(w.organizationId);
  return w;
}

async function setEdge(w: World, announce: string[], language: 'en' | 'fr' | null = null): Promise<void> {
  await applyProvisioning(db, clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, language }],
    radio_edges: [{ edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, announce_cfh: announce }],
  });
}

test('a new request is announced on the edge device of its location, with the option, as a play message with audio', async () => {
  const w = await world();
  await openCfhRequest(app, w);
  await settle();
  const [said, ...more] = await announcements(db, w.edgeId);
  assert.ok(said, 'announced');
  assert.equal(more.length, 0);
  assert.equal(said.text, 'Customer needs help: Help. Someone is coming');
  assert.equal(said.priority, 'normal');
  const play = await outboxPlay(db, said.message_id);
  assert.ok(play);
  assert.equal(play.topic, `radio/${w.edgeId}/play`);
  assert.equal(play.payload.text, said.text);
  assertSpeechWav(play.audio);
});

test('statuses of one request within a few seconds say only the latest', async () => {
  const w = await world();
  const messageId = await openCfhRequest(app, w);
  await ctx.events.runPending();
  await cancelCfhRequest(app, w, messageId);
  await settle();
  const said = await announcements(db, w.edgeId);
  assert.deepEqual(
    said.map((a) => a.cfh_status),
    ['cancelled'],
  );
  assert.match(said[0]?.text ?? '', /^Request cancelled: Help/);
});

test('a status the edge device does not announce is not said; one it announces is, naming who', async () => {
  const w = await world();
  const messageId = await openCfhRequest(app, w);
  await settle(); // created: announced
  const claim = await app.inject({
    method: 'POST',
    url: '/api/callforhelp/claim',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { message_id: messageId, claimed_by: 'Sam', claimed_by_user_id: 'u1', channel_id: 'c1' },
  });
  assert.equal(claim.statusCode, 200, claim.body);
  await settle();
  assert.deepEqual(
    (await announcements(db, w.edgeId)).map((a) => a.cfh_status),
    ['created'],
    'claimed is not in the default announce_cfh',
  );

  await setEdge(w, ['claimed']);
  const w2 = { ...w };
  const second = await openCfhRequest(app, w2);
  await settle();
  const claim2 = await app.inject({
    method: 'POST',
    url: '/api/callforhelp/claim',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { message_id: second, claimed_by: 'Sam', claimed_by_user_id: 'u1', channel_id: 'c1' },
  });
  assert.equal(claim2.statusCode, 200, claim2.body);
  await settle();
  const said = await announcements(db, w.edgeId);
  assert.equal(said.at(-1)?.text, 'Sam is on it: Help. Someone is coming');
  assert.equal(said.filter((a) => a.cfh_status === 'created').length, 1, 'created is no longer announced');
});

test("in a French store the announcement is in French, with the option's French words", async () => {
  const w = await world();
  await setEdge(w, ['created'], 'fr');
  await openCfhRequest(app, w);
  await settle();
  const [said] = await announcements(db, w.edgeId);
  assert.equal(said?.text, "Un client a besoin d'aide: Aide. Quelqu'un arrive");
  const play = await outboxPlay(db, said.message_id);
  assertSpeechWav(play?.audio ?? Buffer.alloc(0));
});

test('an escalation is urgent and names the button', async () => {
  const w = await world();
  const messageId = await openCfhRequest(app, w);
  await settle();
  const [request] = await db.query<{ id: number }>('SELECT id FROM cfh_requests WHERE message_id = $1', [messageId]);
  // The escalation event as the CFH workflow writes it (contract section 11).
  await db.tx((q) =>
    recordEvents(
      q,
      [
        {
          type: 'callforhelp',
          status: 'escalated',
          organizationId: w.organizationId,
          locationId: w.locationId,
          internalId: request?.id ?? 0,
          details: { type: 'call_button', name: 'Paint counter', option_text: 'Help', option_prompt: 'Someone is coming', message_id: messageId },
        },
      ],
      clock.now(),
    ),
  );
  await settle();
  const said = await announcements(db, w.edgeId);
  const escalated = said.find((a) => a.cfh_status === 'escalated');
  assert.ok(escalated, said.map((a) => a.text).join(' | '));
  assert.equal(escalated.priority, 'urgent');
  assert.equal(escalated.text, 'Customer still waiting for help: Paint counter. Someone is coming');
  const play = await outboxPlay(db, escalated.message_id);
  assert.equal(play?.payload.priority, 'urgent');
});

test('an edge device that announces nothing says nothing', async () => {
  const w = await world();
  await setEdge(w, []);
  await openCfhRequest(app, w);
  await settle();
  assert.equal((await announcements(db, w.edgeId)).length, 0);
});
