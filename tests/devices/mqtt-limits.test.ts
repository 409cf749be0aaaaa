// What a connection may make the embedded broker hold before and after it logs in: announced
// packet sizes are checked on the bytes as they arrive (no buffering of a 120 MiB CONNECT), the
// connections of one address that have not logged in are capped, a client id cannot be taken from
// another device, and failed logins beyond a budget are answered slowly while right ones are not.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import WebSocket from 'ws';
import { MAX_UNAUTHENTICATED_PER_ADDRESS, LOGIN_FAILURES_BEFORE_DELAY } from '../../src/devices/mqtt-guard.ts';
import { makeWorld, testApp, TEST_MQTT_URL } from '../support/world.ts';
import { TestDevice } from './device.ts';

const skip = TEST_MQTT_URL !== null && "these limits are the embedded broker's (an external broker has its own)";
const ctx = await testApp();
const port = () => Number(new URL(ctx.mqttUrl).port);

/** The fixed header of an MQTT packet of `type` announcing `length` bytes. */
function header(type: number, length: number): Buffer {
  const bytes = [type << 4];
  let n = length;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}

/** Opens a raw TCP connection to the broker and resolves once it is connected. */
function raw(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port(), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

const closed = (socket: net.Socket | WebSocket, ms = 5_000) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

test('a CONNECT announcing 120 MiB is cut as soon as its header arrives', { skip }, async () => {
  const socket = await raw();
  socket.on('error', () => {});
  const wasClosed = closed(socket);
  socket.write(header(1, 120 * 1024 * 1024));
  socket.write(Buffer.alloc(1024));
  assert.equal(await wasClosed, true, 'the broker closed the connection');
});

test('a first packet that is not a CONNECT is cut', { skip }, async () => {
  const socket = await raw();
  socket.on('error', () => {});
  const wasClosed = closed(socket);
  socket.write(header(3, 10));
  assert.equal(await wasClosed, true);
});

test('over WebSocket too, an oversized CONNECT is cut before it is buffered', { skip }, async () => {
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/mqtt`, 'mqtt');
  ws.on('error', () => {});
  await new Promise<void>((resolve) => ws.once('open', () => resolve()));
  const wasClosed = closed(ws);
  ws.send(Buffer.concat([header(1, 100 * 1024 * 1024), Buffer.alloc(200 * 1024)]));
  assert.equal(await wasClosed, true);
});

test('a logged-in device that sends a packet over the limit is cut', { skip }, async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `locker:${w.lockerId}`, password: w.lockerKey });
  const wasClosed = new Promise<boolean>((resolve) => device.client.stream.once('close', () => resolve(true)));
  device.client.publish(`lockers/${w.lockerId}/acks`, Buffer.alloc(200 * 1024, 0x61), { qos: 0 });
  assert.equal(await wasClosed, true);
  await device.end();
});

test('connections of one address that have not logged in are capped; once they go, a device connects', { skip }, async () => {
  const waiting = await Promise.all(Array.from({ length: MAX_UNAUTHENTICATED_PER_ADDRESS }, () => raw()));
  for (const s of waiting) s.on('error', () => {});
  const extra = await raw();
  extra.on('error', () => {});
  assert.equal(await closed(extra), true, 'the connection over the cap is closed at once');
  const gone = waiting.map((s) => closed(s));
  for (const s of waiting) s.destroy();
  await Promise.all(gone);
  const w = await makeWorld(ctx.db, ctx.clock);
  await new Promise((r) => setTimeout(r, 50));
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `locker:${w.lockerId}`, password: w.lockerKey });
  await device.end();
});

test("a device presenting another device's client id does not take over its session", { skip }, async () => {
  const a = await makeWorld(ctx.db, ctx.clock);
  const b = await makeWorld(ctx.db, ctx.clock);
  const clientId = 'locker-simulator-1';
  const first = await TestDevice.connect(ctx.mqttUrl, { clientId, username: `locker:${a.lockerId}`, password: a.lockerKey });
  let kicked = false;
  first.client.stream.once('close', () => {
    kicked = true;
  });
  const second = await TestDevice.connect(ctx.mqttUrl, { clientId, username: `locker:${b.lockerId}`, password: b.lockerKey });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(kicked, false, 'the first device is still connected');
  assert.equal(first.client.connected, true);
  await second.end();
  await first.end();
});

test('failed logins beyond the budget are answered slowly; the right key is not', { skip }, async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const username = `locker:${w.lockerId}`;
  for (let i = 0; i < LOGIN_FAILURES_BEFORE_DELAY; i++) {
    await assert.rejects(TestDevice.connect(ctx.mqttUrl, { username, password: `wrong-${i}` }));
  }
  const started = Date.now();
  await assert.rejects(TestDevice.connect(ctx.mqttUrl, { username, password: 'wrong-again' }));
  assert.ok(Date.now() - started >= 1_500, 'a failure over the budget waits before its answer');
  const device = await TestDevice.connect(ctx.mqttUrl, { username, password: w.lockerKey });
  assert.equal(device.client.connected, true);
  await device.end();
});
