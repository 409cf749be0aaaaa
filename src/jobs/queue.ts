// Asking for delayed work: a job is a row written in the transaction of the change that asks for
// it, so it exists exactly when that change committed. The scheduler (scheduler.ts) runs it.
//
// This module is the only writer of `jobs` besides the scheduler itself: features compose these
// fragments into their own statements (a CTE each) instead of writing the table.
//
// A job is called off in one way only: marked done without running (attempts stays 0), never
// deleted. CFH keeps the record of every timer a request was given (each request has its one
// timeout job, claimed or not: tests/reliability/load.ts checks it), so a delete would lose what a
// mark keeps, while nothing needs a called-off job gone; retention deletes it with the other
// finished jobs once it is old.
import type { Queryable } from '../db/db.ts';
import { Sql, sql } from '../db/sql.ts';

export interface EnqueueOptions {
  /** At most one pending job per key: enqueueing again moves the pending one. */
  key?: string;
}

/** A time as given, or an SQL expression of one. */
const timeOf = (at: Date | Sql): Sql => (at instanceof Sql ? at : sql`${at}::timestamptz`);

/** Jobs over `rows`, a SELECT (or VALUES) of kind, payload (jsonb), run_at: no key. */
export const enqueueJobs = (rows: Sql): Sql => sql`INSERT INTO jobs (kind, payload, run_at) ${rows}`;

/** Keyed jobs over `rows`, a SELECT of kind, payload, run_at, dedupe_key: a key already pending keeps its job. */
export const enqueueKeyedJobs = (rows: Sql): Sql =>
  sql`INSERT INTO jobs (kind, payload, run_at, dedupe_key) ${rows} ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO NOTHING`;

/**
 * Keyed jobs over `rows` (as enqueueKeyedJobs) where a key already pending takes the new job: its
 * kind, payload and due time, its attempts from 0. With `when` (a condition on `jobs`, the pending
 * one, and `EXCLUDED`, the new one), only where it holds.
 */
export const enqueueReplacingJobs = (rows: Sql, when?: Sql): Sql =>
  sql`INSERT INTO jobs (kind, payload, run_at, dedupe_key) ${rows}
     ON CONFLICT (dedupe_key) WHERE done_at IS NULL
     DO UPDATE SET kind = EXCLUDED.kind, payload = EXCLUDED.payload, run_at = EXCLUDED.run_at, attempts = 0${when === undefined ? sql.empty : sql` WHERE ${when}`}`;

/**
 * Calls off the pending jobs of `keys` (a SELECT of dedupe keys) at `at`: marked done without
 * running. A job running at this moment (its row locked) is skipped, not waited for: its handler
 * finds the change committed and does nothing.
 */
export const callOffJobs = (keys: Sql, at: Date | Sql): Sql => sql`UPDATE jobs SET done_at = ${timeOf(at)} WHERE id IN (
    SELECT id FROM jobs WHERE done_at IS NULL AND dedupe_key IN (${keys}) FOR UPDATE SKIP LOCKED)`;

/** A batch of jobs that ran, failed for good or were called off before `cutoff` (index jobs_done,
 * migration 010), oldest first: pending jobs, however old, stay. */
export const deleteJobsDoneBefore = (cutoff: Date, limit: number): Sql =>
  sql`DELETE FROM jobs WHERE id IN (
     SELECT id FROM jobs WHERE done_at < ${cutoff} ORDER BY done_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`;

/** Stores a job; pass the transaction of the change that asks for it. */
export async function enqueueJob(q: Queryable, kind: string, payload: Record<string, unknown>, runAt: Date, opts: EnqueueOptions = {}): Promise<void> {
  await q.run(
    opts.key === undefined
      ? enqueueJobs(sql`VALUES (${kind}, ${payload}, ${runAt})`)
      : enqueueReplacingJobs(sql`VALUES (${kind}, ${payload}, ${runAt}, ${opts.key})`),
  );
}

/** Calls off the pending job of a key at `at`, if any (a delayed close overtaken by an open, say). */
export async function cancelJob(q: Queryable, key: string, at: Date): Promise<void> {
  await q.run(callOffJobs(sql`SELECT ${key}::text`, at));
}

// --- for a statement still written as text (the fragment carries no values, so its text is whole) ---

/** enqueueKeyedJobs over the text of a SELECT. */
export const insertKeyedJobsFrom = (select: string): string => enqueueKeyedJobs(sql.raw(select)).toQuery().text;
