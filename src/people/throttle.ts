// Section 17's sign-in throttles, kept in the database so that every instance counts together:
// 10 failed passwords for one email in 15 minutes, or 5 wrong PINs for one person on one device,
// and that kind of sign-in for it answers 429 for the 15 minutes after the failure that reached it. An attempt is counted as failed
// before its secret is checked (and forgiven when it was right), under a lock of its subject, so
// that many attempts at once cannot all slip in under the limit. This file is the one writer of
// `sign_in_failures`.
import type { Db } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { AppError } from '../http/errors.ts';

export interface Throttle {
  kind: 'password' | 'pin';
  limit: number;
  windowSeconds: number;
}

export const PASSWORD_THROTTLE: Throttle = { kind: 'password', limit: 10, windowSeconds: 15 * 60 };
export const PIN_THROTTLE: Throttle = { kind: 'pin', limit: 5, windowSeconds: 15 * 60 };

const tooMany = (retryAfter: number) =>
  new AppError(429, 'too_many_attempts', `too many failed attempts; try again in ${Math.ceil(retryAfter / 60)} minutes`, {
    headers: { 'retry-after': String(retryAfter) },
  });

/**
 * Counts an attempt for the subject as failed, or refuses it with 429 when the window already holds
 * the limit; returns the attempt's id, to forgive when the secret turns out right.
 */
export async function takeAttempt(db: Pick<Db, 'tx'>, throttle: Throttle, subject: string, now: Date): Promise<number> {
  const outcome = await db.tx(async (q): Promise<{ retryAfter: number } | { id: number }> => {
    await q.run(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${throttle.kind}:${subject}`}, 0))`);
    // The newest failure within the window, and how many failures the window that ends with it holds:
    // when that reached the limit, the lock lasts the whole window from it (refused attempts are not
    // counted, so it stays the newest until the lock ends).
    const [newest] = await q.run<{ at: string; n: number }>(sql`
      WITH newest AS (
        SELECT at FROM sign_in_failures
        WHERE kind = ${throttle.kind} AND subject = ${subject} AND at > ${now}::timestamptz - ${throttle.windowSeconds} * interval '1 second'
        ORDER BY at DESC LIMIT 1)
      SELECT newest.at, (SELECT count(*) FROM sign_in_failures f
        WHERE f.kind = ${throttle.kind} AND f.subject = ${subject} AND f.at <= newest.at
          AND f.at > newest.at - ${throttle.windowSeconds} * interval '1 second')::int AS n
      FROM newest`);
    if (newest !== undefined && newest.n >= throttle.limit) {
      const reached = new Date(newest.at);
      return { retryAfter: Math.max(1, Math.ceil((reached.getTime() + throttle.windowSeconds * 1000 - now.getTime()) / 1000)) };
    }
    const [row] = await q.run<{ id: number }>(sql`INSERT INTO sign_in_failures (kind, subject, at) VALUES (${throttle.kind}, ${subject}, ${now}) RETURNING id`);
    return { id: Number(row?.id ?? 0) };
  });
  if ('id' in outcome) return outcome.id;
  throw tooMany(outcome.retryAfter);
}

/** The attempt was right after all: it does not count. */
export async function forgiveAttempt(db: Pick<Db, 'statement'>, id: number): Promise<void> {
  await db.statement((q) => q.run(sql`DELETE FROM sign_in_failures WHERE id = ${id}`));
}

/**
 * An attempt at a secret under a throttle: counted as failed before `check` runs (429 when the
 * subject is locked), forgiven when `check` says it was right or could not answer (the hasher busy).
 */
export async function attempt(
  db: Pick<Db, 'tx' | 'statement'>,
  throttle: Throttle,
  subject: string,
  now: Date,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const id = await takeAttempt(db, throttle, subject, now);
  let right: boolean;
  try {
    right = await check();
  } catch (err) {
    await forgiveAttempt(db, id);
    throw err;
  }
  if (right) await forgiveAttempt(db, id);
  return right;
}

/** Retention: failures older than any window. */
export const deleteOldFailures = (before: Date, limit: number) =>
  sql`DELETE FROM sign_in_failures WHERE id IN (SELECT id FROM sign_in_failures WHERE at < ${before} LIMIT ${limit})`;
