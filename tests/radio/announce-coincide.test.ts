// An escalation is always said, even when a reminder of the same request falls in the same instant
// (the sample store's own timers: a reminder every 60 s, the escalation at 120 s). One announcement
// is pending per request; a status the edge device does not announce must not take its place, and
// an escalation is never replaced by a lower status (a reminder, the first call).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { cancelCfhRequest, openCfhRequests } from '../support/requests.ts';
import { recordEvents } from '../support/events.ts';
import { makeWorld, testApp, type World } from '../support/world.ts';

const ctx = await testApp();
const { app, db, clock } = ctx;
// The subscriber starts at the end of the log: start it before any request of these tests.
await ctx.events.runPending();

/** The statuses said on the world's edge device, in order. */
async function said(w: World): Promise<string[]> {
  const rows = await db.query<{ cfh_status: string; priority: string }>(
    `SELECT cfh_status, priority FROM radio_messages WHERE edge_id = $1 AND source = 'announcement' ORDER BY id`,
    [w.edgeId],
  );
  return rows.map((r) => `${r.cfh_status}${r.priority === 'urgent' ? ' (urgent)' : ''}`);
}

/** Lets the subscriber read what committed, then the announcement's few seconds pass and its job runs. */
async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await ctx.events.runPending();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  clock.advance(3_500);
  await ctx.scheduler.runDue();
}

/** Runs the workflow's timers due `seconds` from now, then the announcements they lead to. */
async function after(seconds: number): Promise<void> {
  clock.advance(seconds * 1000);
  await ctx.scheduler.runDue();
  await settle();
}

async function store(announce: string[] | undefined): Promise<World> {
  const w = await makeWorld(db, clock);
  await applyProvisioning(db, clock, {
    locations: [
      {
        id: w.locationId,
        organization_id: w.organizationId,
        name: `Store ${w.locationId}`,
        cfh_reminder_seconds: 60,
        cfh_escalation_seconds: 120,
        cfh_timeout_seconds: 3600,
      },
    ],
    radio_edges: [
      { edge_id: w.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: w.edgeKey, ...(announce ? { announce_cfh: announce } : {}) },
    ],
  });
  return w;
}

test('with reminders every 60 s and the escalation at 120 s, the default edge device announces the escalation', async () => {
  const w = await store(undefined);
  await openCfhRequests(app, w, 1);
  await settle();
  await after(60);
  await after(60);
  assert.deepEqual(await said(w), ['created', 'escalated (urgent)']);
});

test('an edge device that announces reminders too still says the escalation when a reminder comes with it', async () => {
  const w = await store(['created', 'escalated', 'reminder']);
  await openCfhRequests(app, w, 1);
  await settle();
  await after(60);
  await after(60);
  assert.deepEqual(await said(w), ['created', 'reminder', 'escalated (urgent)']);
});

test('a reminder written after a pending escalation, in its own batch, does not replace it', async () => {
  const w = await store(['created', 'escalated', 'reminder']);
  const [messageId] = await openCfhRequests(app, w, 1);
  await settle();
  const [request] = await db.query<{ id: number }>('SELECT id FROM cfh_requests WHERE message_id = $1', [messageId]);
  const event = (status: string) =>
    db.tx((q) =>
      recordEvents(
        q,
        [
          {
            type: 'callforhelp',
            status,
            organizationId: w.organizationId,
            locationId: w.locationId,
            internalId: request?.id ?? 0,
            details: { type: 'api', name: null, option_text: 'Help', option_prompt: null, message_id: messageId },
          },
        ],
        clock.now(),
      ),
    );
  await event('escalated');
  await ctx.events.runPending();
  await event('reminder');
  await settle();
  assert.deepEqual(await said(w), ['created', 'escalated (urgent)']);
});

test('a later status the edge device announces still replaces a pending one (a cancel said instead of the escalation)', async () => {
  const w = await store(undefined);
  const [messageId] = await openCfhRequests(app, w, 1);
  await settle();
  clock.advance(120_000);
  await ctx.scheduler.runDue(); // the escalation: its announcement pending for a few seconds
  await ctx.events.runPending();
  await cancelCfhRequest(app, w, messageId as string);
  await settle();
  assert.deepEqual(await said(w), ['created', 'cancelled']);
});
