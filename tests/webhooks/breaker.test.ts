// A dead endpoint's circuit breaker: after failed attempts in a row its deliveries wait together
// for a probe (one attempt), on the retry schedule's doubling, while another endpoint of the same
// events gets every one at once; a delivered probe sends everything it held. And nothing elsewhere
// in the database cluster holds deliveries back.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../src/clock.ts';
import { closeBreaker, noteFailures, openBreaker } from '../../src/webhooks/attempt-store.ts';
import { BREAKER_FAILURES } from '../../src/webhooks/rules.ts';
import { claimDue } from '../../src/webhooks/store.ts';
import { recordEvents } from '../support/events.ts';
import { makeWorld, provisionToken, type TestContext } from '../support/world.ts';
import { deliveriesOf, deliverNow, fanOut, provisionEndpoint, Receiver, webhookApp } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await webhookApp({ clock: new ManualClock(new Date()) });
});

const clock = () => ctx.clock as ManualClock;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

test('a failing endpoint is probed once per wait after failures in a row, without holding back another; a delivered probe sends the rest', async (t) => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const dead = await Receiver.start(t, 'status500');
  const live = await Receiver.start(t);
  const deadId = await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: dead.url, secret: dead.secret });
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: live.url, secret: live.secret });
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  const events = Array.from({ length: 20 }, (_, i) => ({
    type: 'callforhelp' as const,
    status: 'created',
    organizationId: w.organizationId,
    locationId: w.locationId,
    internalId: `r-${i}`,
    details: {},
  }));
  await ctx.db.tx((q) => recordEvents(q, events, ctx.clock.now()));

  await deliverNow(ctx);
  assert.equal(live.requests, 20, 'the other endpoint got every event');
  assert.equal(dead.requests, BREAKER_FAILURES, 'the failing one was tried until its breaker opened, not once per event');
  const held = await deliveriesOf(ctx.app, token, deadId);
  assert.equal(held.length, 20);
  assert.ok(held.every((d) => d.state === 'pending'));
  assert.equal(held.filter((d) => d.attempts.length === 0).length, 20 - BREAKER_FAILURES, 'the rest were not attempted');
  const wait = Math.max(...held.map((d) => Date.parse(d.next_attempt_at ?? '') - ctx.clock.now().getTime()));
  assert.ok(wait <= 30_000, `the probe comes within 30 s, as a first retry does (${wait} ms)`);

  // At the probe time one attempt probes it; failing, the wait grows and nothing else is tried.
  clock().advance(30_000);
  await deliverNow(ctx);
  assert.equal(dead.requests, BREAKER_FAILURES + 1, 'one probe');
  await deliverNow(ctx);
  assert.equal(dead.requests, BREAKER_FAILURES + 1, 'nothing more before the next probe time');

  // The endpoint comes back: the next probe is delivered, and then everything it held.
  dead.behaviour = 'ok';
  clock().advance(60_000);
  await deliverNow(ctx);
  const after = await deliveriesOf(ctx.app, token, deadId);
  assert.deepEqual(
    after.map((d) => d.state),
    Array(20).fill('delivered'),
  );
  const delivered = new Set(dead.received.filter((d, i) => i > BREAKER_FAILURES && d.signed).map((d) => d.body.uuid));
  assert.equal(delivered.size, 20, 'every event once the endpoint answered');
});

test('a long transaction in another database of the cluster holds no delivery back', async (t) => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const receiver = await Receiver.start(t);
  await provisionEndpoint(ctx.db, ctx.clock, { organizationId: w.organizationId, url: receiver.url, secret: receiver.secret });
  // Another database's transaction, with its transaction id, running all along.
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = '/postgres';
  const elsewhere = new pg.Client({ connectionString: url.toString() });
  await elsewhere.connect();
  try {
    await elsewhere.query('BEGIN');
    await elsewhere.query('SELECT pg_current_xact_id()');
    await ctx.db.tx((q) =>
      recordEvents(
        q,
        [
          {
            type: 'callforhelp',
            status: 'created',
            organizationId: w.organizationId,
            locationId: w.locationId,
            internalId: 'r-1',
            details: {},
          },
        ],
        ctx.clock.now(),
      ),
    );
    await deliverNow(ctx);
    assert.deepEqual(receiver.statuses(), ['created'], "delivered while the other database's transaction runs");
  } finally {
    await elsewhere.query('ROLLBACK');
    await elsewhere.end();
  }
});

test("a breaker another instance closed between this one's count of failures and its opening stays closed", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const endpointId = await provisionEndpoint(ctx.db, ctx.clock, {
    organizationId: w.organizationId,
    url: 'http://127.0.0.1:9/hook',
    secret: 'breaker-race-secret-0123456789abcdef',
  });
  const now = ctx.clock.now();
  // Instance A counts the failure that reaches the threshold...
  const health = await ctx.db.statement((q) => noteFailures(q, endpointId, BREAKER_FAILURES, now));
  assert.equal(health.failures, BREAKER_FAILURES);
  // ...instance B's attempt is delivered meanwhile and closes it...
  await ctx.db.statement((q) => closeBreaker(q, endpointId, now));
  // ...then A opens it, as its count told it to: it must not, or nothing would ever close it.
  await ctx.db.statement((q) => openBreaker(q, endpointId, new Date(now.getTime() + 60_000), now));
  const [row] = await ctx.db.query<{ open_until: Date | null; failures: number }>(
    'SELECT open_until, failures FROM webhook_endpoint_health WHERE endpoint_id = $1',
    [endpointId],
  );
  assert.deepEqual(row, { open_until: null, failures: 0 });
});

test('opening the breaker writes its own row, not the deliveries it holds; those past their 24 hours are failed then', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const endpointId = await provisionEndpoint(ctx.db, ctx.clock, {
    organizationId: w.organizationId,
    url: 'http://127.0.0.1:9/hook',
    secret: 'breaker-rows-secret-0123456789abcdef',
  });
  const token = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['webhooks']);
  const created = ctx.clock.now();
  await ctx.db.tx((q) =>
    recordEvents(
      q,
      Array.from({ length: 5 }, (_, i) => ({
        type: 'callforhelp' as const,
        status: 'created',
        organizationId: w.organizationId,
        locationId: w.locationId,
        internalId: `h-${i}`,
        details: {},
      })),
      created,
    ),
  );
  await fanOut(ctx);
  const ids = (await deliveriesOf(ctx.app, token, endpointId)).map((d) => d.id).sort((a, b) => a - b);
  assert.equal(ids.length, 5);
  // The oldest has been retried for more than a day (its own retries, before the endpoint failed).
  await ctx.db.query(`UPDATE webhook_deliveries SET retry_since = $2 WHERE id = $1`, [ids[0], new Date(created.getTime() - 25 * 3600_000)]);

  clock().advance(1_000);
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + 60_000);
  await ctx.db.statement((q) => noteFailures(q, endpointId, BREAKER_FAILURES, now));
  assert.deepEqual(await ctx.db.statement((q) => openBreaker(q, endpointId, until, now)), { opened: true, failed: 1 });
  const rows = await ctx.db.query<{ id: number; state: string; untouched: boolean }>(
    'SELECT id, state, updated_at = $2 AS untouched FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id',
    [endpointId, created],
  );
  assert.deepEqual(
    rows.map((r) => r.state),
    ['failed', 'pending', 'pending', 'pending', 'pending'],
  );
  assert.deepEqual(
    rows.map((r) => r.untouched),
    [false, true, true, true, true],
    'the held deliveries were not written',
  );
  const shown = await deliveriesOf(ctx.app, token, endpointId);
  assert.ok(
    shown.filter((d) => d.state === 'pending').every((d) => Date.parse(d.next_attempt_at ?? '') === until.getTime()),
    'W1 shows the probe time',
  );

  // Held until the probe time, then probed by one attempt.
  const claim = (at: Date) => ctx.db.statement((q) => claimDue(q, at, { limit: 10, perEndpoint: 8, busy: new Map(), runLength: 20, leaseMs: 60_000 }));
  assert.deepEqual(
    (await claim(new Date(until.getTime() - 1))).flat().filter((d) => d.endpoint_id === endpointId),
    [],
  );
  assert.deepEqual(
    (await claim(until))
      .flat()
      .filter((d) => d.endpoint_id === endpointId)
      .map((d) => d.id),
    [ids[1]],
  );
});

test("the claim finds stores in flight by a probe of each one's leases, not by reading every lease set since the last vacuum", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  await provisionEndpoint(ctx.db, ctx.clock, {
    organizationId: w.organizationId,
    url: 'http://127.0.0.1:9/hook',
    secret: 'claim-plan-secret-0123456789abcdef',
  });
  await ctx.db.tx((q) =>
    recordEvents(
      q,
      [{ type: 'callforhelp', status: 'created', organizationId: w.organizationId, locationId: w.locationId, internalId: 'p-1', details: {} }],
      ctx.clock.now(),
    ),
  );
  await fanOut(ctx);
  // A table grown as in a store's life: many deliveries done, each with the lease it was sent under,
  // and statistics that say so (a few rows would make any scan the cheapest plan).
  await ctx.db.query(
    `WITH d AS (SELECT endpoint_id, location_key FROM webhook_deliveries ORDER BY id DESC LIMIT 1),
     e AS (INSERT INTO events (type, status, organization_id, location_id, internal_id, details, message, created_at)
           SELECT 'callforhelp', 'completed', $1, $2, 'grown-' || i, '{}', 'completed', now() FROM generate_series(1, 20000) AS i RETURNING id)
     INSERT INTO webhook_deliveries (endpoint_id, event_id, location_key, state, lease, locked_until, attempts, retry_since, delivered_at, created_at, updated_at)
     SELECT d.endpoint_id, e.id, d.location_key + (e.id % 50)::int, 'delivered', gen_random_uuid(), now() - interval '1 day', 1, now(), now(), now(), now()
     FROM d, e`,
    [w.organizationId, w.locationId],
  );
  await ctx.db.query('ANALYZE webhook_deliveries');
  // The claim's own statement, as it is sent, explained instead of run.
  let statement: { text: string; params: readonly unknown[] } | null = null;
  await claimDue({ query: async (text: string, params?: readonly unknown[]) => ((statement = { text, params: params ?? [] }), []) } as never, ctx.clock.now(), {
    limit: 10,
    perEndpoint: 8,
    busy: new Map(),
    runLength: 20,
    leaseMs: 60_000,
  });
  const claim = statement as { text: string; params: readonly unknown[] } | null;
  assert.ok(claim !== null);
  const plan = await ctx.db.tx(async (q) => {
    const [row] = await q.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${claim.text}`, claim.params);
    return row?.['QUERY PLAN'][0]?.Plan as PlanNode;
  });
  const nodes: PlanNode[] = [];
  const walk = (n: PlanNode) => {
    nodes.push(n);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(plan);
  assert.deepEqual(
    nodes.filter((n) => n['Node Type'].startsWith('Bitmap')).map((n) => n['Index Name']),
    [],
    'no index read whole',
  );
  // The leases checked: those of one store at a time, by an index condition on the store.
  const leases = nodes.filter((n) => `${n.Filter ?? ''}${n['Index Cond'] ?? ''}${n['Recheck Cond'] ?? ''}`.includes('locked_until >'));
  assert.ok(leases.length > 0, JSON.stringify(plan));
  for (const n of leases) assert.match(n['Index Cond'] ?? '', /endpoint_id = .*location_key = /, JSON.stringify(n));
});
