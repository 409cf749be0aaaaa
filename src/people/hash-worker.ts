// The worker thread that hashes passwords and PINs (low-priority-hasher.ts). On Linux a thread has
// its own nice value: this one asks for the lowest priority, so that sign-ins take the CPU the
// service's requests leave, and a burst of them never slows the store's devices and pages.
import crypto from 'node:crypto';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';

export interface HashJob {
  id: number;
  message: Uint8Array;
  nonce: Uint8Array;
  memory: number;
  passes: number;
  parallelism: number;
  tagLength: number;
}

export type HashReply = { id: number; tag: Uint8Array } | { id: number; error: string };

try {
  os.setPriority(19);
} catch {
  // Not allowed here (some containers): the hashes still run off the event loop, at normal priority.
}

parentPort?.on('message', (job: HashJob) => {
  try {
    const { id, ...params } = job;
    const tag = crypto.argon2Sync('argon2id', params);
    parentPort?.postMessage({ id, tag } satisfies HashReply);
  } catch (err) {
    parentPort?.postMessage({ id: job.id, error: (err as Error).message } satisfies HashReply);
  }
});
