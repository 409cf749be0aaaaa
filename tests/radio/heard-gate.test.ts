// Heard messages of one edge device are handled one at a time with a few waiting; a flood beyond
// that is refused, and another edge device's messages are handled meanwhile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heardGate } from '../../src/radio/heard-gate.ts';

test("a flood of heard messages from one edge device is handled one at a time, a few waiting, the rest refused; another edge's go on", async () => {
  let running = 0;
  let most = 0;
  const handled: string[] = [];
  const releases: (() => void)[] = [];
  const gate = heardGate(async (edgeId, payload) => {
    running++;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => releases.push(resolve));
    handled.push(`${edgeId}:${payload.toString()}`);
    running--;
  }, { concurrency: 1, queueLimit: 3 });
  const flood = Array.from({ length: 10 }, (_, i) => gate('noisy', Buffer.from(String(i))));
  const other = gate('quiet', Buffer.from('x'));
  // Let every call reach the gate, then release handlers one by one until everything settled.
  for (let settled = false; !settled;) {
    await new Promise((r) => setTimeout(r, 5));
    releases.shift()?.();
    settled = releases.length === 0 && running === 0 && handled.length >= 5;
  }
  const ran = await Promise.all(flood);
  assert.deepEqual(ran, [true, true, true, true, false, false, false, false, false, false]);
  assert.equal(await other, true);
  assert.equal(most, 2, 'one per edge device at once (the two edge devices together)');
  assert.deepEqual(handled.filter((h) => h.startsWith('noisy')), ['noisy:0', 'noisy:1', 'noisy:2', 'noisy:3'], 'in the order heard');
});
