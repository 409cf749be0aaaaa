// Two service instances on one PostgreSQL and one external broker (a private Mosquitto): the
// races hold across processes, delayed jobs and device messages happen once, and a locker device
// gets each command exactly once. PostgreSQL only (TEST_DATABASE_URL): PGlite cannot be shared.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { api, LockerDevice, SECRET, writeWorld, type Api, type RelWorld } from './clients.ts';
import { dueJobsDone, freshDatabase, inspect } from './postgres.ts';
import { cleanupAll, startMosquitto, startService, tempDir, twoInstancesSkip, waitFor, type Service } from '../../scripts/lib/processes.ts';

const skip = twoInstancesSkip();

let w: RelWorld;
let a: Service;
let b: Service;
let A: Api;
let B: Api;
let db: pg.Pool;
let device: LockerDevice;

before(async () => {
  if (skip) return;
  const url = await freshDatabase(process.env.TEST_DATABASE_URL as string);
  db = inspect(url);
  const broker = await startMosquitto();
  w = writeWorld(tempDir('two'), 40);
  const env = (id: string) => ({ DATABASE_URL: url, MQTT_URL: broker.url, MQTT_CLIENT_ID: id, SECRET_TOKEN: SECRET, PROVISION_FILE: w.file });
  // Started together on an empty database: both migrate and provision at the same moment.
  [a, b] = await Promise.all([startService('A', env('storeops-a')), startService('B', env('storeops-b'))]);
  A = api(a.url, w);
  B = api(b.url, w);
  device = await LockerDevice.connect(broker.url, w.lockerId, w.lockerKey);
});

after(cleanupAll);

/** Alternates the instances: request i goes to A when i is even, to B when odd. */
const either = (i: number) => (i % 2 === 0 ? A : B);

test('two instances started together on an empty database migrate and provision it once', { skip }, async () => {
  const { rows } = await db.query('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version');
  assert.ok(rows.length >= 4 && rows.every((r: { n: number }) => r.n === 1), JSON.stringify(rows));
  const { rows: cabinets } = await db.query('SELECT count(*)::int AS n FROM cabinets');
  assert.equal(cabinets[0].n, 80);
  for (const instance of [A, B]) assert.equal((await instance.listing()).status, 200);
});

test('of 20 concurrent orders for one cabinet split across both instances exactly one is created', { skip }, async () => {
  for (const cabinetId of w.cabinetIds.slice(0, 3)) {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => either(i).createOrder(cabinetId, 5_000 + i)));
    const created = answers.filter((r) => r.status === 201);
    assert.equal(created.length, 1, JSON.stringify(answers.map((r) => r.status)));
    assert.ok(
      answers.every((r) => r.status === 201 || (r.status === 409 && r.body.code === 'cabinet_occupied')),
      JSON.stringify(answers.map((r) => [r.status, r.body.code])),
    );
    const { rows } = await db.query('SELECT id, open_code FROM locker_orders WHERE cabinet_id = $1', [cabinetId]);
    assert.deepEqual(rows, [{ id: created[0]?.body.id, open_code: created[0]?.body.open_code }]);
    const {
      rows: [cabinet],
    } = await db.query('SELECT occupied FROM cabinets WHERE id = $1', [cabinetId]);
    assert.equal(cabinet.occupied, true);
  }
});

test('identical orders replayed on both instances at once make one order and answer it to all', { skip }, async () => {
  const cabinetId = w.cabinetIds[3] as number;
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => either(i).createOrder(cabinetId, 7_777)));
  assert.deepEqual(
    answers.map((r) => r.status),
    Array(12).fill(201),
  );
  assert.equal(new Set(answers.map((r) => `${String(r.body.id)}/${String(r.body.open_code)}`)).size, 1);
  const { rows } = await db.query('SELECT count(*)::int AS n FROM locker_orders WHERE cabinet_id = $1', [cabinetId]);
  assert.equal(rows[0].n, 1);
});

test('of 20 concurrent claims split across both instances exactly one succeeds', { skip }, async () => {
  for (let round = 0; round < 3; round++) {
    const made = await either(round).createRequest();
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const messageId = made.body.message_id as string;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => either(i).claim(messageId, `emp${i}`)));
    assert.ok(
      answers.every((r) => r.status === 200),
      JSON.stringify(answers.map((r) => r.status)),
    );
    const winners = answers.flatMap((r, i) => (r.body.success === true ? [i] : []));
    assert.equal(winners.length, 1, `winners: ${winners.join(', ')}`);
    const {
      rows: [request],
    } = await db.query('SELECT id, claimed_by, claimed_at FROM cfh_requests WHERE message_id = $1', [messageId]);
    assert.equal(request.claimed_by, `emp${winners[0]}`);
    assert.notEqual(request.claimed_at, null);
    const { rows: events } = await db.query("SELECT actor_name FROM cfh_request_events WHERE request_id = $1 AND kind = 'claimed'", [request.id]);
    assert.deepEqual(events, [{ actor_name: `emp${winners[0]}` }]);
  }
});

test('delayed closes, cool-off ends and CFH timeouts each run once with both instances polling', { skip }, async () => {
  const closes = w.quickCabinetIds.slice(0, 6);
  const coolOffs = w.quickCabinetIds.slice(6, 12);
  // Queued through both instances; both schedulers then race for the same due jobs.
  const queued = await Promise.all([
    ...closes.map(async (cabinetId, i) => {
      assert.equal((await either(i).command(cabinetId, { command: 'open' })).status, 200);
      return either(i + 1).command(cabinetId, { command: 'close', delay: 1 });
    }),
    ...coolOffs.map(async (cabinetId, i) => {
      const order = await either(i).createOrder(cabinetId, 9_000 + i, w.quickLockerId, w.quickLocationId);
      assert.equal(order.status, 201);
      return either(i + 1).completeByCabinet(cabinetId, { delay: 1 });
    }),
    ...Array.from({ length: 6 }, (_, i) => either(i).createRequest(w.quickLocationId, w.quickOptionId)),
  ]);
  assert.ok(
    queued.every((r) => r.status === 200 || r.status === 201),
    JSON.stringify(queued.map((r) => r.status)),
  );
  const requestIds = queued.slice(12).map((r) => r.body.id as number);

  await dueJobsDone(db, 'the delayed jobs to run');

  const { rows: jobs } = await db.query(
    `SELECT kind, attempts, failed, done_at FROM jobs
     WHERE (kind = 'cfh.timeout' AND (payload->>'request_id')::bigint = ANY($1::bigint[]))
        OR (kind <> 'cfh.timeout' AND run_at <= now())`,
    [requestIds],
  );
  assert.equal(jobs.length, 18, JSON.stringify(jobs));
  // attempts counts the runs of a job: a job two schedulers both ran would show 2.
  for (const job of jobs) assert.deepEqual([job.attempts, job.failed, job.done_at !== null], [1, false, true], JSON.stringify(job));

  const { rows: timeouts } = await db.query(
    "SELECT request_id, count(*)::int AS n FROM cfh_request_events WHERE kind = 'timed_out' AND request_id = ANY($1::bigint[]) GROUP BY request_id",
    [requestIds],
  );
  assert.deepEqual(
    timeouts.map((t: { n: number }) => t.n),
    Array(6).fill(1),
  );
  const { rows: doors } = await db.query('SELECT state FROM cabinets WHERE id = ANY($1::int[])', [closes]);
  assert.ok(doors.every((d: { state: string }) => d.state === 'closed'));
  const { rows: released } = await db.query('SELECT occupied, released_at, cool_off_until FROM cabinets WHERE id = ANY($1::int[])', [coolOffs]);
  assert.ok(
    released.every(
      (c: { occupied: boolean; released_at: unknown; cool_off_until: unknown }) => !c.occupied && c.released_at !== null && c.cool_off_until === null,
    ),
    JSON.stringify(released),
  );
  const { rows: executed } = await db.query(
    'SELECT count(*)::int AS n FROM cabinet_commands WHERE cabinet_id = ANY($1::int[]) AND delay_seconds = 1 AND executed_at IS NOT NULL',
    [closes],
  );
  assert.equal(executed[0].n, 6);
});

test('every device message is published once and the locker device gets each command exactly once', { skip }, async () => {
  // Commands from both instances at once, so both dispatchers compete for the same locker's rows.
  const cabinets = w.cabinetIds.slice(10, 30);
  const answers = await Promise.all(
    cabinets.flatMap((cabinetId, i) => [
      either(i).command(cabinetId, { command: 'open', acted_by: i }),
      either(i + 1).command(cabinetId, { command: 'set_thermal_mode', thermal_mode: 'chill' }),
    ]),
  );
  assert.ok(
    answers.every((r) => r.status === 200),
    JSON.stringify(answers.map((r) => r.status)),
  );

  const topic = `lockers/${w.lockerId}/commands`;
  const unacked = async () =>
    (await db.query('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1 AND acked_at IS NULL', [topic])).rows[0].n as number;
  await waitFor('every command to be acked by the device', async () => (await unacked()) === 0, { tries: 150 });

  const { rows } = await db.query('SELECT message_key, publish_attempts FROM device_outbox WHERE topic = $1 ORDER BY id', [topic]);
  assert.ok(rows.length >= 40, `${rows.length} messages`);
  // No fault here, so nothing may be published twice, by one instance or by both.
  assert.deepEqual(
    rows.filter((r: { publish_attempts: number }) => r.publish_attempts !== 1),
    [],
  );
  assert.deepEqual([...device.deliveries].sort(), rows.map((r: { message_key: string }) => r.message_key).sort(), 'each command arrived exactly once');
  assert.equal(device.duplicates().size, 0);
});
