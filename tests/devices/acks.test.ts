// Device acks are recorded in batches; a feature's ack handler runs in the transaction that records
// them; an ack the database refuses (or a handler that throws on it) loses no other ack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { AckBatcher } from '../../src/devices/acks.ts';
import { silentLogger } from '../../src/devices/transport.ts';
import { freshId, testDb } from '../support/world.ts';
import { outboxState, queueCommand, queuePlay } from './device.ts';

const db = await testDb();
const clock = new ManualClock();

test('one ack whose body the database refuses loses no other ack of its batch, and counts itself without its body', async () => {
  const lockerId = freshId();
  const keys: string[] = [];
  for (let i = 0; i < 6; i++) keys.push(await queueCommand(db, clock, lockerId));
  const batcher = new AckBatcher(db, clock, silentLogger);
  const topic = `lockers/${lockerId}/commands`;
  const flushes = keys.map((key, i) =>
    // jsonb cannot hold a NUL character: this ack's body is refused.
    batcher.add({ topic, key, body: i === 3 ? { command_id: key, note: 'a\u0000b' } : { command_id: key, status: 'ok' } }),
  );
  await Promise.all(flushes.filter((f) => f !== null));
  const acked = await Promise.all(keys.map(async (key) => (await outboxState(db, key)).acked_at !== null));
  assert.deepEqual(acked, [true, true, true, true, true, true], 'acked, so the message is not replayed forever');
  const [poison] = await db.query<{ ack: unknown }>('SELECT ack FROM device_outbox WHERE message_key = $1', [keys[3]]);
  assert.deepEqual(poison?.ack, {}, 'without the body the database refused');
  assert.deepEqual(await db.query('SELECT 1 AS ok'), [{ ok: 1 }], 'and the database answers the next query');
});

test('a handler of edge acks runs in the recording transaction, once per message, and its failure spares the others', async () => {
  const edgeId = `edge-acks-${freshId()}`;
  const keys: string[] = [];
  for (let i = 0; i < 4; i++) keys.push(await queuePlay(db, clock, edgeId));
  const seen: string[] = [];
  const batcher = new AckBatcher(db, clock, silentLogger);
  batcher.onAcked('test', 'edge', async (q, acked) => {
    if (acked.some((a) => a.key === keys[2])) throw new Error('this one cannot be handled');
    // Inside the transaction: the ack is already recorded there.
    const [row] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM device_outbox WHERE message_key = ANY ($1) AND acked_at IS NOT NULL', [
      acked.map((a) => a.key),
    ]);
    assert.equal(row?.n, acked.length);
    seen.push(...acked.map((a) => a.key));
  });
  const topic = `radio/${edgeId}/play`;
  const flushes = [...keys, keys[0] as string].map((key) => batcher.add({ topic, key, body: { message_id: key } }));
  await Promise.all(flushes.filter((f) => f !== null));
  assert.deepEqual(seen.sort(), [keys[0], keys[1], keys[3]].sort(), 'each message once; a repeated ack is not a new one');
  const acked = await Promise.all(keys.map(async (key) => (await outboxState(db, key)).acked_at !== null));
  assert.deepEqual(acked, [true, true, false, true], 'the ack whose handler failed is left for the device to ack again');
});
