// End to end: a locker device (a real MQTT client, as firmware would be) gets the commands.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, test } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { isoMicros } from '../../src/db/timestamps.ts';
import { lockers, sharedApp, type Json, type Lockers } from './helpers.ts';

await sharedApp();

interface Command {
  topic: string;
  body: Json;
}

/** Connects as the world's locker and subscribes to its commands; `next` waits for a matching one. */
async function lockerDevice(l: Lockers) {
  const client: MqttClient = await mqtt.connectAsync(l.ctx.mqttUrl, {
    username: `locker:${l.world.lockerId}`,
    password: l.world.lockerKey,
    clientId: `locker-test-${crypto.randomBytes(6).toString('hex')}`,
    reconnectPeriod: 0,
  });
  after(() => client.endAsync());
  const received: Command[] = [];
  const waiters: { match: (c: Command) => boolean; resolve: (c: Command) => void }[] = [];
  client.on('message', (topic, payload) => {
    const command = { topic, body: JSON.parse(payload.toString('utf8')) as Json };
    received.push(command);
    for (const w of waiters.splice(0)) {
      if (w.match(command)) w.resolve(command);
      else waiters.push(w);
    }
  });
  const [grant] = await client.subscribeAsync(`lockers/${l.world.lockerId}/commands`, { qos: 1 });
  assert.equal(grant?.qos, 1, 'the locker may read its own commands');
  return {
    client,
    next: (match: (c: Command) => boolean) =>
      new Promise<Command>((resolve) => {
        const seen = received.find(match);
        if (seen !== undefined) resolve(seen);
        else waiters.push({ match, resolve });
      }),
    ack: (commandId: string) => client.publishAsync(`lockers/${l.world.lockerId}/acks`, JSON.stringify({ command_id: commandId, status: 'ok' }), { qos: 1 }),
  };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

test('the locker receives the open command with the cabinet key when the customer agrees by open code', async () => {
  const l = await lockers({ cabinets: 3 });
  const device = await lockerDevice(l);
  const order = await l.placeOrder(2);
  const res = await l.customer(order.open_code as string, 'agree');
  assert.equal(res.statusCode, 200, res.body);

  const { topic, body } = await device.next((c) => c.body.command === 'open');
  assert.equal(topic, `lockers/${l.world.lockerId}/commands`);
  assert.equal(body.cabinet_key, 3);
  assert.equal(body.cabinet_id, l.world.cabinetIds[2]);
  assert.equal(body.door, 'front');
  assert.equal(body.issued_at, isoMicros(l.ctx.clock.now()));
  const [logged] = await l.ctx.db.query<{ command_id: string }>('SELECT command_id FROM cabinet_commands WHERE cabinet_id = $1', [l.world.cabinetIds[2]]);
  assert.equal(body.command_id, logged?.command_id);

  // The locker's ack is recorded on the outbox row.
  await device.ack(body.command_id as string);
  await until(async () => {
    const [row] = await l.ctx.db.query<{ acked_at: string | null }>('SELECT acked_at FROM device_outbox WHERE message_key = $1', [body.command_id]);
    return row?.acked_at !== null && row?.acked_at !== undefined;
  });
});

test('a staff command and a delayed close reach the locker, the close when its delay has passed', async () => {
  const l = await lockers({ cabinets: 2 });
  const device = await lockerDevice(l);
  assert.equal((await l.command(1, { command: 'open', rearload: true, acted_by: 9 })).statusCode, 200);
  const open = await device.next((c) => c.body.command === 'open');
  assert.deepEqual([open.body.cabinet_key, open.body.door], [2, 'rear']);

  assert.equal((await l.command(1, { command: 'close', rearload: true, delay: 5 })).statusCode, 200);
  l.ctx.clock.advance(5_000);
  assert.equal((await l.ctx.scheduler.runDue()) >= 1, true);
  const close = await device.next((c) => c.body.command === 'close');
  assert.deepEqual([close.body.cabinet_key, close.body.door], [2, 'rear']);
  assert.equal((await l.cabinet(1)).rear_load_status, 'closed');
});
