// The service's low-priority hasher gives exactly what the thread pool's does (a hash made by one
// verifies with the other), one secret at a time, and stopping it refuses what still waits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lowPriorityHasher } from '../../src/people/low-priority-hasher.ts';
import { hashSecret, threadPoolHasher, verifySecret } from '../../src/people/passwords.ts';

test('a hash made in the low-priority worker verifies on the thread pool, and the other way round', async (t) => {
  const worker = lowPriorityHasher();
  t.after(() => worker.close());
  const inWorker = await hashSecret('a long enough password', worker);
  const onPool = await hashSecret('another long password', threadPoolHasher);
  assert.equal(await verifySecret('a long enough password', inWorker, threadPoolHasher), true);
  assert.equal(await verifySecret('another long password', onPool, worker), true);
  assert.equal(await verifySecret('not the password', onPool, worker), false);
  const many = await Promise.all(Array.from({ length: 6 }, (_, i) => hashSecret(`password number ${i}`, worker)));
  assert.equal(new Set(many).size, 6);
});

test('stopping the hasher refuses the hashes still waiting, and a new one starts the worker again', async () => {
  const worker = lowPriorityHasher();
  const waiting = Promise.allSettled(Array.from({ length: 4 }, () => hashSecret('a long enough password', worker)));
  await worker.close();
  const outcomes = await waiting;
  assert.ok(outcomes.some((o) => o.status === 'rejected'));
  assert.match(await hashSecret('a long enough password', worker), /^\$argon2id\$/);
  await worker.close();
});

test('past the hashes it lets wait, a sign-in is told to try again (503 with Retry-After), and the ones waiting still finish', async (t) => {
  const worker = lowPriorityHasher({ maxWaiting: 3 });
  t.after(() => worker.close());
  const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => hashSecret(`password number ${i}`, worker)));
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected'],
  );
  const refusal = (outcomes[3] as PromiseRejectedResult).reason as { status: number; code: string; headers: Record<string, string> };
  assert.deepEqual([refusal.status, refusal.code, refusal.headers['retry-after']], [503, 'unavailable', '2']);
  assert.match(await hashSecret('and later another', worker), /^\$argon2id\$/);
});
