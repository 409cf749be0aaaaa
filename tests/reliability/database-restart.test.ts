// PostgreSQL restarted under load, on a private throwaway cluster (the machine's shared server is
// never touched): while it is down every request fails fast with 503 and /readyz says so; when it
// is back the same process serves again by itself, and what it acknowledged before is still there.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { api, SECRET, writeWorld, type Api, type RelWorld } from './clients.ts';
import { checkLedgerAndInvariants, healthy, Load, type Outcome } from './load.ts';
import { dueJobsDone, inspect, postgresBinaries, startCluster, type Cluster } from './postgres.ts';
import { cleanupAll, startService, tempDir, waitFor, type Service } from '../../scripts/lib/processes.ts';

const binaries = postgresBinaries();
const skip = 'reason' in binaries ? `cannot start a private PostgreSQL: ${binaries.reason}` : false;

let cluster: Cluster;
let db: pg.Pool;
let w: RelWorld;
let service: Service;
let S: Api;

before(async () => {
  if (skip) return;
  cluster = await startCluster();
  db = inspect(cluster.url);
  w = writeWorld(tempDir('pgrestart'), 24);
  service = await startService('S', { DATABASE_URL: cluster.url, SECRET_TOKEN: SECRET, PROVISION_FILE: w.file });
  S = api(service.url, w);
});

after(async () => {
  if (service !== undefined && !service.running()) console.error(`the service died: ${service.output()}`);
  await cleanupAll();
});

/** The pool's connect timeout is 5 s: an answer slower than that while the server is down is a hang. */
const FAIL_FAST_MS = 5_000;

const unavailable = (o: Outcome) => o.status === 503 && o.code === 'unavailable' && o.retryAfter !== null;
const describe = (list: Outcome[]) => list.map((o) => `${o.op} ${o.status} ${String(o.code)} ${o.error ?? ''} ${o.ms}ms`);

test('PostgreSQL restarted under load: 503 while it is down, readiness says which, and the service recovers by itself', { skip }, async (t) => {
  const load = new Load(w, () => [{ name: 'S', api: S }]);
  load.phase = 'before';
  load.start(4, w.cabinetIds);
  let inTransaction: Awaited<ReturnType<typeof S.command>> | undefined;
  let duringOutage: { ready: Awaited<ReturnType<typeof S.ready>>; live: number };
  try {
    await waitFor('acknowledged orders before the restart', () => load.ledger.orders.size >= 15, { tries: 300, everyMs: 50 });
    // Delayed work that falls due while the database is away runs once it is back.
    const close = await S.command(w.quickCabinetIds[0] as number, { command: 'close', delay: 1 });
    const help = await S.createRequest(w.quickLocationId, w.quickOptionId);
    assert.deepEqual([close.status, help.status], [200, 201]);

    // A request caught inside a transaction when the server dies: it waits on a row lock held here.
    const locker = new pg.Client({ connectionString: cluster.url });
    locker.on('error', () => {});
    t.after(() => locker.end());
    await locker.connect();
    const heldCabinet = w.quickCabinetIds[1] as number;
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM cabinets WHERE id = $1 FOR UPDATE', [heldCabinet]);
    const caught = S.command(heldCabinet, { command: 'open' });
    await waitFor('the command to wait on the lock', async () => {
      const { rows } = await db.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%current_order_id%'", // L3's cabinet lock
      );
      return rows[0].n > 0;
    });

    load.phase = 'down';
    await cluster.stop();
    inTransaction = await caught;
    await waitFor('requests while the database is down', () => load.of('down').length >= 60, { tries: 300, everyMs: 50 });
    duringOutage = { ready: await S.ready(), live: (await fetch(`${service.url}/healthz`)).status };
    // Past the time the delayed work was due: it must wait for the database, then run.
    await waitFor('the outage to outlast the delayed work', () => load.of('down').length >= 120, { tries: 300, everyMs: 50 });

    load.phase = 'recovering';
    await cluster.start();
    await waitFor('readiness after the restart', async () => (await S.ready()).status === 200, { tries: 100, everyMs: 200 });
    load.phase = 'after';
    await waitFor('requests after the restart', () => load.of('after').filter(healthy).length >= 40, { tries: 300, everyMs: 50 });
  } finally {
    await load.stop();
  }

  const down = load.of('down');
  const slowest = Math.max(...down.map((o) => o.ms));
  t.diagnostic(`requests: ${load.of('before').length} before, ${down.length} while down (slowest ${slowest} ms), ${load.of('after').length} after`);
  assert.deepEqual(describe(load.of('before').filter((o) => !healthy(o))), []);
  assert.deepEqual(describe(down.filter((o) => !unavailable(o))), [], 'every request while the database is down is a 503 unavailable with Retry-After');
  assert.ok(slowest < FAIL_FAST_MS, `slowest answer while down: ${slowest} ms`);
  // In flight when the server died, or sent while it was starting up: an answer, never a 500 or a hang.
  const between = load.outcomes.filter((o) => o.crossed || o.phase === 'recovering');
  assert.deepEqual(describe(between.filter((o) => !healthy(o) && !unavailable(o))), []);
  assert.deepEqual(describe(load.of('after').filter((o) => !healthy(o))), [], 'every request succeeds again');

  assert.deepEqual([inTransaction?.status, inTransaction?.body.code], [503, 'unavailable'], 'a request inside a transaction when the server died');
  assert.equal(duringOutage.live, 200, '/healthz: the process is alive');
  assert.equal(duringOutage.ready.status, 503);
  assert.equal(duringOutage.ready.body.database, 'down');
  assert.equal(duringOutage.ready.body.code, 'unavailable');
  const ready = await S.ready();
  assert.deepEqual([ready.status, ready.body.database], [200, 'up']);
  assert.ok(service.running(), 'the same process recovered, nobody restarted it');

  await dueJobsDone(db, 'the delayed work to run after the restart');
  const { rows: timedOut } = await db.query(
    "SELECT count(*)::int AS n FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id WHERE r.location_id = $1 AND e.kind = 'timed_out'",
    [w.quickLocationId],
  );
  assert.equal(timedOut[0].n, 1);
  const { rows: closed } = await db.query('SELECT count(*)::int AS n FROM cabinet_commands WHERE delay_seconds = 1 AND executed_at IS NOT NULL');
  assert.equal(closed[0].n, 1);

  assert.deepEqual(await checkLedgerAndInvariants(db, load.ledger), []);
});

test('a PostgreSQL that stops answering (connections open, nothing comes back): 503 instead of a hang, then recovery', { skip }, async (t) => {
  assert.equal((await S.ready()).status, 200);
  cluster.freeze();
  let answers: Awaited<ReturnType<typeof S.listing>>[];
  let ready: Awaited<ReturnType<typeof S.ready>>;
  try {
    // More requests than the pool has connections: some wait on an open connection, some for one.
    const pending = Promise.all(Array.from({ length: 14 }, (_, i) => (i % 2 === 0 ? S.listing() : S.createRequest())));
    ready = await S.ready();
    answers = await pending;
  } finally {
    cluster.thaw();
  }
  t.diagnostic(`answers while frozen: ${answers.map((a) => `${a.status}/${a.ms}ms`).join(' ')}`);
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.code]),
    answers.map(() => [503, 'unavailable']),
  );
  assert.deepEqual([ready.status, ready.body.database], [503, 'down']);
  await waitFor('readiness after the thaw', async () => (await S.ready()).status === 200, { tries: 100, everyMs: 200 });
  const after = await Promise.all(Array.from({ length: 14 }, (_, i) => (i % 2 === 0 ? S.listing() : S.createRequest())));
  assert.deepEqual(
    after.map((a) => a.status),
    after.map((_, i) => (i % 2 === 0 ? 200 : 201)),
  );
});
