// Asking for delayed work: a job is a row written in the transaction of the change that asks for
// it, so it exists exactly when that change committed. The scheduler (scheduler.ts) runs it.
import type { Queryable } from '../db/db.ts';

export interface EnqueueOptions {
  /** At most one pending job per key: enqueueing again moves the pending one. */
  key?: string;
}

/** Stores a job; pass the transaction of the change that asks for it. */
export async function enqueueJob(q: Queryable, kind: string, payload: Record<string, unknown>, runAt: Date, opts: EnqueueOptions = {}): Promise<void> {
  if (opts.key === undefined) {
    await q.query('INSERT INTO jobs (kind, payload, run_at) VALUES ($1, $2, $3)', [kind, payload, runAt]);
    return;
  }
  await q.query(
    `INSERT INTO jobs (kind, payload, run_at, dedupe_key) VALUES ($1, $2, $3, $4)
     ON CONFLICT (dedupe_key) WHERE done_at IS NULL
     DO UPDATE SET kind = EXCLUDED.kind, payload = EXCLUDED.payload, run_at = EXCLUDED.run_at, attempts = 0`,
    [kind, payload, runAt, opts.key],
  );
}

/** Drops the pending job of a key, if any (a delayed close overtaken by an open, say). */
export async function cancelJob(q: Queryable, key: string): Promise<void> {
  await q.query('DELETE FROM jobs WHERE dedupe_key = $1 AND done_at IS NULL', [key]);
}

/**
 * For a store statement that makes a change and asks for its job in one round trip: the INSERT of
 * a CTE, over a SELECT of the columns kind, payload (jsonb), run_at (no dedupe key).
 */
export function insertJobsFrom(select: string): string {
  return `INSERT INTO jobs (kind, payload, run_at) ${select}`;
}

/**
 * As insertJobsFrom, with a dedupe key: a SELECT of kind, payload (jsonb), run_at, dedupe_key. A
 * key already pending keeps its job.
 */
export function insertKeyedJobsFrom(select: string): string {
  return `INSERT INTO jobs (kind, payload, run_at, dedupe_key) ${select} ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO NOTHING`;
}

/**
 * For a store statement whose change ends what some pending jobs were for: the DELETE of a CTE,
 * over a SELECT of their dedupe keys. A job running at this moment (its row locked) is skipped,
 * not waited for: its handler finds the change committed and does nothing.
 */
export function deleteJobsFrom(keysSelect: string): string {
  return `DELETE FROM jobs WHERE id IN (
    SELECT id FROM jobs WHERE done_at IS NULL AND dedupe_key IN (${keysSelect}) FOR UPDATE SKIP LOCKED)`;
}
