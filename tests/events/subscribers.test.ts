// The event log's durable subscribers: every committed event once, in commit order, across
// instances; woken by the commit that wrote it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { openDb, type Db, type Tx } from '../../src/db/db.ts';
import type { EventRow, NewEvent } from '../../src/events/log.ts';
import { EventSubscribers } from '../../src/events/subscribers.ts';
import { recordEvents } from '../support/events.ts';
import { freshId, testDb, testDatabaseUrl } from '../support/world.ts';

const db = await testDb();
const clock = new ManualClock();

/** An event of an organization of the test's own (subscribers see every event; tests filter). */
const event = (organizationId: number, status: string): NewEvent => ({
  type: 'locker',
  status,
  organizationId,
  locationId: null,
  internalId: status,
  details: { n: status },
});

function collector(organizationId: number) {
  const seen: EventRow[] = [];
  const handler = async (_q: Tx, events: readonly EventRow[]) => {
    seen.push(...events.filter((e) => e.organization_id === organizationId));
  };
  return { seen, handler };
}

/** Runs the subscribers until `done` holds: on PostgreSQL a transaction of another test process
 * still running holds back events committed after it began (see docs/events.md). */
async function runUntil(subs: EventSubscribers[], done: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) {
    await Promise.all(subs.map((s) => s.runPending()));
    if (!done()) await new Promise((r) => setTimeout(r, 20));
  }
}

async function secondHandle(): Promise<Db> {
  return openDb({ url: await testDatabaseUrl(), poolSize: 5 });
}

test('a subscriber gets every committed event once, in commit order, and none of a rolled-back change', async () => {
  const org = freshId();
  const subs = new EventSubscribers({ db });
  const { seen, handler } = collector(org);
  subs.register(`test-${org}`, handler);
  await subs.runPending(); // the subscriber starts at the end of the log
  await db.tx((q) => recordEvents(q, [event(org, 'a'), event(org, 'b')], clock.now()));
  await assert.rejects(
    db.tx(async (q) => {
      await recordEvents(q, [event(org, 'rolled-back')], clock.now());
      throw new Error('the change fails');
    }),
  );
  await db.tx((q) => recordEvents(q, [event(org, 'c')], clock.now()));
  await runUntil([subs], () => seen.length >= 3);
  await subs.runPending();
  assert.deepEqual(
    seen.map((e) => e.status),
    ['a', 'b', 'c'],
  );
  assert.match(seen[0]?.uuid ?? '', /^[0-9a-f-]{36}$/);
  assert.deepEqual(seen[0]?.details, { n: 'a' });
});

test('a new subscriber starts at the end of the log: history is not replayed', async () => {
  const org = freshId();
  await db.tx((q) => recordEvents(q, [event(org, 'old')], clock.now()));
  // Other test processes on this database may hold a transaction open for a moment: until it ends,
  // 'old' is not yet behind the horizon a new subscriber starts at (it would rightly be read).
  for (let i = 0; i < 500; i++) {
    const [row] = await db.query<{ past: boolean }>('SELECT pg_snapshot_xmin(pg_current_snapshot()) > (SELECT max(tx_id) FROM events) AS past');
    if (row?.past === true) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const subs = new EventSubscribers({ db });
  const { seen, handler } = collector(org);
  subs.register(`test-${org}`, handler);
  await subs.runPending();
  await db.tx((q) => recordEvents(q, [event(org, 'new')], clock.now()));
  await runUntil([subs], () => seen.length >= 1);
  assert.deepEqual(
    seen.map((e) => e.status),
    ['new'],
  );
});

test('a handler that fails leaves its events for the next run', async () => {
  const org = freshId();
  const subs = new EventSubscribers({ db });
  let fail = true;
  const seen: string[] = [];
  subs.register(`test-${org}`, async (_q, events) => {
    const mine = events.filter((e) => e.organization_id === org);
    if (mine.length > 0 && fail) throw new Error('receiver down');
    seen.push(...mine.map((e) => e.status));
  });
  await subs.runPending();
  await db.tx((q) => recordEvents(q, [event(org, 'x')], clock.now()));
  let failed = false;
  for (let i = 0; i < 250 && !failed; i++)
    failed = await subs.runPending().then(
      () => false,
      () => true,
    );
  assert.ok(failed, 'the failing handler was given the event');
  assert.deepEqual(seen, []);
  fail = false;
  await runUntil([subs], () => seen.length >= 1);
  assert.deepEqual(seen, ['x']);
});

test('a failing subscriber holds back only itself', async () => {
  const org = freshId();
  const subs = new EventSubscribers({ db });
  subs.register(`test-${org}-broken`, async (_q, events) => {
    if (events.some((e) => e.organization_id === org)) throw new Error('a poison event');
  });
  const { seen, handler } = collector(org);
  subs.register(`test-${org}-healthy`, handler);
  await subs.runPending();
  await db.tx((q) => recordEvents(q, [event(org, 'p')], clock.now()));
  for (let i = 0; i < 250 && seen.length === 0; i++) await subs.runPending().catch(() => {});
  assert.deepEqual(
    seen.map((e) => e.status),
    ['p'],
  );
});

test('the commit that wrote an event wakes a started subscriber without waiting for its poll', async () => {
  const org = freshId();
  const subs = new EventSubscribers({ db, pollMs: 60_000 });
  const { seen, handler } = collector(org);
  subs.register(`test-${org}`, handler);
  await subs.runPending();
  subs.start();
  try {
    await db.tx((q) => recordEvents(q, [event(org, 'woken')], clock.now()));
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      seen.map((e) => e.status),
      ['woken'],
    );
  } finally {
    await subs.stop();
  }
});

test('two instances hand each event to exactly one of them', async () => {
  const org = freshId();
  const second = await secondHandle();
  try {
    const name = `test-${org}`;
    const a = new EventSubscribers({ db, batchSize: 5 });
    const b = new EventSubscribers({ db: second, batchSize: 5 });
    const ca = collector(org);
    const cb = collector(org);
    a.register(name, async (q, events) => {
      await q.query('SELECT pg_sleep(0.005)');
      await ca.handler(q, events);
    });
    b.register(name, cb.handler);
    await a.runPending();
    for (let n = 0; n < 40; n++) await db.tx((q) => recordEvents(q, [event(org, `e${n}`)], clock.now()));
    await Promise.all([a.runPending(), b.runPending(), a.runPending(), b.runPending()]);
    await runUntil([a, b], () => ca.seen.length + cb.seen.length >= 40);
    const all = [...ca.seen, ...cb.seen].map((e) => e.status);
    assert.equal(all.length, 40);
    assert.equal(new Set(all).size, 40, 'no event was handled twice');
  } finally {
    await second.close();
  }
});

test('an event whose transaction commits late is not skipped by a reader that saw later ones', async () => {
  const org = freshId();
  const subs = new EventSubscribers({ db });
  const { seen, handler } = collector(org);
  subs.register(`test-${org}`, handler);
  await subs.runPending();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const wrote = new Promise<void>((resolve) => (written = resolve));
  // The slow transaction takes its id first, then commits after a quicker one.
  const slow = db.tx(async (q) => {
    await recordEvents(q, [event(org, 'slow')], clock.now());
    written();
    await held;
  });
  await wrote;
  await db.tx((q) => recordEvents(q, [event(org, 'quick')], clock.now()));
  await subs.runPending();
  assert.deepEqual(
    seen.map((e) => e.status),
    [],
    'nothing is read past a transaction still running',
  );
  release();
  await slow;
  await runUntil([subs], () => seen.length >= 2);
  assert.deepEqual(
    seen.map((e) => e.status),
    ['slow', 'quick'],
  );
});
