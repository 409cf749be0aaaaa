// The external broker restarted (a private Mosquitto with persistence; the machine's shared one is
// never touched): the HTTP operations keep working while it is away, the commands queued meanwhile
// (including a delayed close that fell due) reach the locker device once it is back, in order.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { api, LockerDevice, SECRET, writeWorld } from './clients.ts';
import { freshDatabase, inspect } from './postgres.ts';
import { atCleanup, cleanupAll, mosquittoBinary, startMosquitto, startService, tempDir, waitFor } from '../../scripts/lib/processes.ts';

const skip = mosquittoBinary() === null ? 'needs mosquitto (set MOSQUITTO_BIN) for a broker this test may restart' : false;

test('the broker restarted: commands queued while it was away reach the locker afterwards, each acted on once, in order', { skip }, async (t) => {
  t.after(cleanupAll);
  const dir = tempDir('broker');
  const w = writeWorld(dir, 12);
  const broker = await startMosquitto();
  // On PostgreSQL when TEST_DATABASE_URL is set; otherwise the embedded database in a data dir.
  const databaseUrl = process.env.TEST_DATABASE_URL ? await freshDatabase(process.env.TEST_DATABASE_URL) : null;
  const service = await startService('S', {
    SECRET_TOKEN: SECRET,
    PROVISION_FILE: w.file,
    MQTT_URL: broker.url,
    MQTT_CLIENT_ID: 'storeops-s',
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : { DATA_DIR: path.join(dir, 'data') }),
  });
  atCleanup(async () => {
    if (!service.running()) t.diagnostic(`the service died: ${service.output()}`);
  });
  const S = api(service.url, w);
  const device = await LockerDevice.connect(broker.url, w.lockerId, w.lockerKey);
  const [c1, c2, c3, c4, c5] = w.cabinetIds as [number, number, number, number, number];
  const topic = `lockers/${w.lockerId}/commands`;
  const db = databaseUrl !== null ? inspect(databaseUrl) : null; // PGlite is the service's alone

  for (const cabinetId of [c1, c2, c3, c5]) assert.equal((await S.command(cabinetId, { command: 'open' })).status, 200);
  await waitFor('the first commands to arrive', () => device.processed.length === 4);

  await broker.stop();
  await waitFor('the service to see the broker gone', async () => (await S.ready()).body.mqtt === 'down');
  const ready = await S.ready();
  assert.deepEqual([ready.status, ready.body.database], [200, 'up'], 'the broker is not needed to be ready');

  // Queued while the broker is away, one after another: a delayed close that falls due meanwhile,
  // staff commands, and a customer's agree.
  assert.equal((await S.command(c5, { command: 'close', delay: 1 })).status, 200);
  for (const cabinetId of [c1, c2, c3]) {
    assert.equal((await S.command(cabinetId, { command: 'close' })).status, 200);
    assert.equal((await S.command(cabinetId, { command: 'set_thermal_mode', thermal_mode: 'chill' })).status, 200);
  }
  const order = await S.createOrder(c4, 1);
  assert.equal(order.status, 201);
  assert.equal((await S.customer(order.body.open_code as string, 'agree')).status, 200);
  await waitFor('the delayed close to run', async () => {
    const listing = await S.listing();
    const cabinets = (listing.body as unknown as { cabinets: { id: number; state: string }[] }[])[0]?.cabinets ?? [];
    return cabinets.find((c) => c.id === c5)?.state === 'closed';
  });
  if (db !== null) {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1 AND published_at IS NULL', [topic]);
    assert.equal(rows[0].n, 8, 'what was queued while the broker was away waits, unpublished');
  }
  assert.equal(device.processed.length, 4, 'nothing reached the device while the broker was away');

  await broker.start();
  await waitFor('every queued command to reach the device', () => device.processed.length === 12, { tries: 200 });
  await waitFor('the service to reconnect', async () => (await S.ready()).body.mqtt === 'up');

  // Each command acted on once (the device dedupes by command_id; see the diagnostic for copies),
  // and in the order it was given: the delayed close whenever it fell due.
  const keys = Object.fromEntries([c1, c2, c3, c4, c5].map((id, i) => [id, i + 1]));
  const immediate = device.actions.slice(4).filter((a) => a !== `${keys[c5]}:close`);
  assert.deepEqual(immediate, [
    `${keys[c1]}:close`,
    `${keys[c1]}:set_thermal_mode`,
    `${keys[c2]}:close`,
    `${keys[c2]}:set_thermal_mode`,
    `${keys[c3]}:close`,
    `${keys[c3]}:set_thermal_mode`,
    `${keys[c4]}:open`,
  ]);
  assert.equal(device.actions.filter((a) => a === `${keys[c5]}:close`).length, 1);
  if (db !== null) {
    await waitFor('every command to be acked', async () => {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1 AND acked_at IS NULL', [topic]);
      return rows[0].n === 0;
    });
    const { rows } = await db.query('SELECT message_key FROM device_outbox WHERE topic = $1 ORDER BY id', [topic]);
    assert.deepEqual(
      device.processed,
      rows.map((r: { message_key: string }) => r.message_key),
      'in the order they were queued',
    );
  }
  t.diagnostic(`copies delivered more than once: ${device.duplicates().size}`);
});
