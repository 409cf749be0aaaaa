// The device simulators behave as the devices they stand in for: they ack what they get, the
// locker reports its doors with the L7 request, the edge device saves the WAV it was sent.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { enqueueDeviceMessage } from '../../src/devices/outbox.ts';
import { startEdgeSimulator } from '../../src/devices/simulators/edge.ts';
import { startLockerSimulator } from '../../src/devices/simulators/locker.ts';
import { makeWorld, testApp } from '../support/world.ts';
import { outboxState, queueCommand, waitUntil } from './device.ts';

const ctx = await testApp();
const { db, clock } = ctx;

interface StatusReport {
  apiKey: string | undefined;
  body: { cabinets: { key: number; front_status: string; rear_status: string }[]; locker_info?: { ip: string; firmware: string } };
}

/** Stands where the service's L7 endpoint is, to see the request exactly as the simulator sends it. */
async function statusReceiver(): Promise<{ url: string; reports: StatusReport[] }> {
  const reports: StatusReport[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/api/lockers/cabinet/status') {
        reports.push({ apiKey: req.headers['api-key'] as string | undefined, body: JSON.parse(data) as StatusReport['body'] });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, reports };
}

test('the locker simulator acks each command and reports the door it moved with the L7 status update', async () => {
  const world = await makeWorld(db, clock);
  const receiver = await statusReceiver();
  const lines: string[] = [];
  const simulator = startLockerSimulator({
    lockerId: world.lockerId,
    key: world.lockerKey,
    mqttUrl: ctx.mqttUrl,
    httpUrl: receiver.url,
    print: (l) => lines.push(l),
    persistentSession: false,
  });
  try {
    await simulator.ready;
    const open = await queueCommand(db, clock, world.lockerId, { cabinet_key: 2, command: 'open', door: 'front' });
    await waitUntil(async () => (await outboxState(db, open)).acked_at !== null && receiver.reports.length === 1);
    assert.equal(receiver.reports[0]?.apiKey, world.lockerKey);
    assert.deepEqual(receiver.reports[0]?.body.cabinets, [{ key: 2, front_status: 'open', rear_status: 'closed' }]);
    assert.equal(typeof receiver.reports[0]?.body.locker_info?.firmware, 'string');

    const close = await queueCommand(db, clock, world.lockerId, { cabinet_key: 2, command: 'close', door: 'front' });
    const rear = await queueCommand(db, clock, world.lockerId, { cabinet_key: 2, command: 'open', door: 'rear' });
    const resize = await queueCommand(db, clock, world.lockerId, { cabinet_key: 2, command: 'resize', size: 'large' });
    await waitUntil(async () => (await outboxState(db, resize)).acked_at !== null && receiver.reports.length === 3);
    assert.equal((await outboxState(db, close)).acked_at !== null && (await outboxState(db, rear)).acked_at !== null, true);
    assert.deepEqual(
      receiver.reports.map((r) => r.body.cabinets[0]),
      [
        { key: 2, front_status: 'open', rear_status: 'closed' },
        { key: 2, front_status: 'closed', rear_status: 'closed' },
        { key: 2, front_status: 'closed', rear_status: 'open' },
      ],
    );
    assert.ok(
      lines.some((l) => l.includes('resize')),
      'it says what it got',
    );
  } finally {
    await simulator.close();
  }
});

test('the edge simulator saves the WAV it receives into its folder and acks it as played', async () => {
  const world = await makeWorld(db, clock);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-edge-'));
  after(() => fs.rmSync(outDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const simulator = startEdgeSimulator({
    edgeId: world.edgeId,
    key: world.edgeKey,
    mqttUrl: ctx.mqttUrl,
    outDir,
    play: false,
    print: (l) => lines.push(l),
    persistentSession: false,
  });
  try {
    await simulator.ready;
    const wav = Buffer.concat([Buffer.from('RIFF'), crypto.randomBytes(400)]);
    const key = crypto.randomUUID();
    await db.tx((q) =>
      enqueueDeviceMessage(
        q,
        {
          topic: `radio/${world.edgeId}/play`,
          payload: {
            message_id: key,
            text: 'Cleanup on aisle five',
            actor: 'chat-bot',
            mime: 'audio/wav',
            audio: wav.toString('base64'),
            queued_at: clock.now().toISOString(),
          },
          key,
        },
        clock.now(),
      ),
    );
    await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
    assert.deepEqual(fs.readFileSync(path.join(outDir, `${key}.wav`)), wav);
    assert.ok(lines.some((l) => l.includes('Cleanup on aisle five')));
  } finally {
    await simulator.close();
  }
});

test('the edge simulator on a machine without a sound device says so once at start and stays quiet per message', async () => {
  const world = await makeWorld(db, clock);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-edge-'));
  after(() => fs.rmSync(outDir, { recursive: true, force: true }));
  // A player that is installed but has nothing to play on, as aplay without a sound card.
  const player = path.join(outDir, 'aplay');
  fs.writeFileSync(player, '#!/bin/sh\necho "aplay: main:831: audio open error: No such file or directory" >&2\nexit 1\n', { mode: 0o755 });
  const lines: string[] = [];
  const simulator = startEdgeSimulator({
    edgeId: world.edgeId,
    key: world.edgeKey,
    mqttUrl: ctx.mqttUrl,
    outDir,
    player,
    print: (l) => lines.push(l),
    persistentSession: false,
  });
  try {
    await simulator.ready;
    for (const text of ['Cleanup on aisle five', 'Cleanup on aisle six']) {
      const key = crypto.randomUUID();
      await db.tx((q) =>
        enqueueDeviceMessage(
          q,
          {
            topic: `radio/${world.edgeId}/play`,
            payload: {
              message_id: key,
              text,
              actor: 'chat-bot',
              mime: 'audio/wav',
              audio: Buffer.from('RIFF....').toString('base64'),
              queued_at: clock.now().toISOString(),
            },
            key,
          },
          clock.now(),
        ),
      );
      await waitUntil(async () => (await outboxState(db, key)).acked_at !== null);
    }
    assert.equal(lines.filter((l) => /aplay cannot play here: no sound device/.test(l)).length, 1, lines.join('\n'));
    assert.ok(!lines.some((l) => /could not play/.test(l)), lines.join('\n'));
  } finally {
    await simulator.close();
  }
});
