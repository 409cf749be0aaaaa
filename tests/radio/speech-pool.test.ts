// The speech pool's own rules, with a stand-in engine (tests/radio/fixtures/hang-worker.ts): a worker
// given up for hanging is out of service before anyone hears of it, and its folder goes with it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { WorkerPool } from '../../src/radio/speech/pool.ts';
import { SpeechTimeoutError } from '../../src/radio/speech/errors.ts';

const workerUrl = new URL('./fixtures/hang-worker.ts', import.meta.url);

test('a job asked for the moment a hung worker is given up goes to its replacement, never to the worker being ended', async () => {
  const pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 3000, workerUrl });
  try {
    await pool.ready();
    const next = await pool.run('hang', 'en', 1000).then(
      () => assert.fail('a hung synthesis cannot succeed'),
      (err: unknown) => {
        assert.ok(err instanceof SpeechTimeoutError);
        // Asked in the same turn as the refusal, before the old worker's exit is seen.
        return pool.run('Aisle 7', 'en', 1000);
      },
    );
    assert.equal(next.length, 16);
  } finally {
    await pool.close();
  }
});

test("a worker ended while it speaks leaves nothing in its folder: the pool removes the worker's folder", async () => {
  const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-pool-test-'));
  const pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 3000, workerUrl, scratchDir });
  try {
    await pool.ready();
    assert.deepEqual(fs.readdirSync(scratchDir), ['worker-1']);
    await assert.rejects(pool.run('hang', 'en', 1000), SpeechTimeoutError);
    assert.equal((await pool.run('Aisle 7', 'en', 1000)).length, 16);
    // The replacement has its folder; the ended worker's is gone once it has exited.
    for (let i = 0; i < 50 && fs.readdirSync(scratchDir).includes('worker-1'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(fs.readdirSync(scratchDir), ['worker-2']);
  } finally {
    await pool.close();
    fs.rmSync(scratchDir, { recursive: true, force: true });
  }
});

test('a worker that served its share keeps serving until its replacement is ready, then leaves: no text waits for a start', async () => {
  const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-pool-test-'));
  const pool = new WorkerPool({ size: 1, queueLimit: 4, timeoutMs: 10_000, workerUrl, scratchDir, recycleAfter: 2 });
  try {
    await pool.ready();
    for (let i = 0; i < 2; i++) assert.equal((await pool.run('Aisle 7', 'en', 1000)).length, 16);
    // Served its share: its replacement is starting, and it answers meanwhile.
    assert.equal((await pool.run('Aisle 7', 'en', 1000)).length, 16);
    for (let i = 0; i < 200 && fs.readdirSync(scratchDir).includes('worker-1'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(fs.readdirSync(scratchDir), ['worker-2'], 'the first left once the second was ready');
    assert.equal((await pool.run('Aisle 7', 'en', 1000)).length, 16);
  } finally {
    await pool.close();
    fs.rmSync(scratchDir, { recursive: true, force: true });
  }
});
