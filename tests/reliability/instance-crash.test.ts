// One of two instances is killed (SIGKILL) in the middle of a load of orders and claims: the other
// keeps serving, and after the killed one is restarted nothing acknowledged is lost and no order,
// claim or device message is half-written. PostgreSQL only (TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, LockerDevice, SECRET, writeWorld } from './clients.ts';
import { checkLedgerAndInvariants, healthy, Load, type Target } from './load.ts';
import { dueJobsDone, freshDatabase, inspect } from './postgres.ts';
import { cleanupAll, startMosquitto, startService, tempDir, twoInstancesSkip, waitFor } from '../../scripts/lib/processes.ts';

const skip = twoInstancesSkip();

test('an instance killed under load: the other serves on, and after its restart nothing acknowledged is lost', { skip }, async (t) => {
  t.after(cleanupAll);
  const url = await freshDatabase(process.env.TEST_DATABASE_URL as string);
  const db = inspect(url);
  const broker = await startMosquitto();
  const w = writeWorld(tempDir('crash'), 36);
  const env = (id: string) => ({ DATABASE_URL: url, MQTT_URL: broker.url, MQTT_CLIENT_ID: id, SECRET_TOKEN: SECRET, PROVISION_FILE: w.file });
  const [b, first] = await Promise.all([startService('B', env('storeops-b')), startService('A', env('storeops-a'))]);
  let a = first;
  const device = await LockerDevice.connect(broker.url, w.lockerId, w.lockerKey);

  let targets: Target[] = [
    { name: 'A', api: api(a.url, w) },
    { name: 'B', api: api(b.url, w) },
  ];
  const load = new Load(w, () => targets);
  load.phase = 'before';
  load.start(6, w.cabinetIds);
  try {
    await waitFor('acknowledged orders before the crash', () => load.ledger.orders.size >= 20 && load.of('before', 'A').length >= 40, {
      tries: 300,
      everyMs: 50,
    });

    load.phase = 'down';
    await a.crash();
    await waitFor('B to serve during the outage', () => load.of('down', 'B').length >= 60, { tries: 300, everyMs: 50 });

    a = await startService('A', a.env); // same port, same broker client id
    targets = [
      { name: 'A', api: api(a.url, w) },
      { name: 'B', api: api(b.url, w) },
    ];
    load.phase = 'after';
    await waitFor('A to serve again', () => load.of('after', 'A').filter(healthy).length >= 30, { tries: 300, everyMs: 50 });
  } finally {
    await load.stop();
  }

  const before = load.of('before');
  const downB = load.of('down', 'B');
  const downA = load.of('down', 'A');
  const afterRestart = load.of('after');
  t.diagnostic(
    `requests: ${before.length} before the kill, ${downB.length} to B and ${downA.length} to the dead A during the outage, ${afterRestart.length} after the restart`,
  );
  t.diagnostic(`acknowledged: ${load.ledger.orders.size} orders, ${load.ledger.requests.size} CFH requests`);

  const unhealthy = (list: typeof before) => list.filter((o) => !healthy(o)).map((o) => `${o.target} ${o.op} ${o.status} ${String(o.code)} ${o.error ?? ''}`);
  assert.deepEqual(unhealthy(before), [], 'both instances served before the kill');
  assert.deepEqual(unhealthy(downB), [], 'B kept serving while A was down');
  assert.deepEqual(unhealthy(afterRestart), [], 'both serve after the restart');
  assert.ok(
    downA.some((o) => o.status === 0),
    'the load did reach the dead A',
  );
  const crossing = load.outcomes.filter((o) => o.crossed || (o.phase === 'down' && o.target === 'A'));
  assert.deepEqual(
    crossing.filter((o) => o.status !== 0 && !healthy(o)).map((o) => `${o.op} ${o.status}`),
    [],
    'no error answer from the dying or restarting A',
  );

  // The cool-offs the load started end by the durable scheduler, whichever instance runs them.
  await dueJobsDone(db, 'due jobs to run');
  const { rows: jobs } = await db.query('SELECT count(*)::int AS n FROM jobs WHERE attempts > 1 OR failed');
  assert.equal(jobs[0].n, 0, 'no job ran twice or failed');

  assert.deepEqual(await checkLedgerAndInvariants(db, load.ledger), []);

  // Every command queued for the locker reaches it; a copy may come twice (a dispatcher killed
  // between the broker's PUBACK and its commit), and the device acts on each command_id once.
  const topic = `lockers/${w.lockerId}/commands`;
  await waitFor(
    'every locker command to be acked',
    async () => {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1 AND acked_at IS NULL', [topic]);
      return rows[0].n === 0;
    },
    { tries: 200 },
  );
  const { rows: queued } = await db.query('SELECT message_key FROM device_outbox WHERE topic = $1 ORDER BY id', [topic]);
  assert.ok(queued.length > 0);
  assert.deepEqual([...device.processed].sort(), queued.map((r: { message_key: string }) => r.message_key).sort());
  t.diagnostic(`locker commands: ${queued.length}, copies delivered twice: ${device.duplicates().size}`);

  // Nothing is left locked or stuck: every open order completes, then every cabinet takes an order.
  const again = (i: number) => api(i % 2 === 0 ? a.url : b.url, w);
  const { rows: open } = await db.query('SELECT open_code FROM locker_orders WHERE completed_at IS NULL');
  for (const [i, o] of (open as { open_code: string }[]).entries()) {
    assert.equal((await again(i).completeByCode(o.open_code)).status, 200);
  }
  const fresh = await Promise.all(w.cabinetIds.map((id, i) => again(i).createOrder(id, 999_000 + i)));
  assert.deepEqual(
    fresh.map((r) => r.status),
    w.cabinetIds.map(() => 201),
  );
});
