// Argon2id in one worker thread of the lowest priority (hash-worker.ts), for the running service:
// on libuv's thread pool, 20 sign-ins a second took four threads at normal priority and slowed
// every other request (docs/performance.md, "Sign-in and sessions"). One thread hashes one secret
// at a time; the others wait their turn. The worker starts at the first hash and, idle, never
// keeps the process alive.
import { Worker } from 'node:worker_threads';
import { AppError } from '../http/errors.ts';
import type { Hasher } from './passwords.ts';
import type { HashJob, HashReply } from './hash-worker.ts';

/** Hashes waiting at most (about two seconds of them): past it a sign-in is told to try again, so
 * that a client sending sign-ins by the thousand cannot make every store's wait grow without end. */
export const HASHES_WAITING_MAX = 64;

const busy = () => new AppError(503, 'unavailable', 'too many sign-ins at once; try again in a moment', { headers: { 'retry-after': '2' } });

export function lowPriorityHasher(opts: { maxWaiting?: number } = {}): Hasher {
  const maxWaiting = opts.maxWaiting ?? HASHES_WAITING_MAX;
  let worker: Worker | null = null;
  let nextId = 1;
  const waiting = new Map<number, { resolve: (tag: Buffer) => void; reject: (err: Error) => void }>();

  const failAll = (err: Error) => {
    for (const job of waiting.values()) job.reject(err);
    waiting.clear();
    worker = null;
  };

  const started = (): Worker => {
    if (worker !== null) return worker;
    const w = new Worker(new URL('./hash-worker.ts', import.meta.url));
    w.unref();
    w.on('message', (reply: HashReply) => {
      const job = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) w.unref();
      if (job === undefined) return;
      if ('error' in reply) job.reject(new Error(`argon2: ${reply.error}`));
      else job.resolve(Buffer.from(reply.tag));
    });
    w.on('error', (err) => failAll(err));
    w.on('exit', (code) => {
      if (worker === w) failAll(new Error(`the hashing worker exited (${code})`));
    });
    worker = w;
    return w;
  };

  return {
    async derive(secret, salt, cost) {
      if (waiting.size >= maxWaiting) throw busy();
      const id = nextId++;
      const w = started();
      // A hash in flight keeps the process alive until it is answered.
      w.ref();
      const job: HashJob = {
        id,
        message: Buffer.from(secret, 'utf8'),
        nonce: salt,
        tagLength: cost.tagLength,
        memory: cost.memory,
        passes: cost.passes,
        parallelism: cost.parallelism,
      };
      return new Promise<Buffer>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.postMessage(job);
      });
    },
    async close() {
      const w = worker;
      worker = null;
      failAll(new Error('the service is stopping'));
      if (w !== null) await w.terminate();
    },
  };
}
