// Durable delayed work (a delayed close, the end of a cool-off, a CFH timeout): the runner.
// A job is a row with a due time (queue.ts writes it). A worker picks one due row with FOR UPDATE SKIP LOCKED and runs
// its handler in that same transaction, which also marks it done: so with any number of instances
// a job's effects commit exactly once, and a job that fell due while every instance was down runs
// at the next start. Handlers touch only the database; messages to devices go through the outbox,
// and the job's commit wakes the dispatcher. Work that is not the database's (speech) is a
// PreparedJob's `prepare`, run with no transaction open: the job is held meanwhile by a lease.
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { WorkLoop } from '../work/loop.ts';

export type JobHandler = (q: Tx, payload: Record<string, unknown>, job: { id: number; runAt: string }) => Promise<void>;

/**
 * A job with slow work outside the database (speech): `prepare` runs first, with no transaction
 * open, while a lease of `leaseMs` keeps other workers off the job; then `commit` runs in the
 * transaction that marks the job done, only if the job is still the one prepared: not done by a
 * worker that took it after the lease ran out, not moved or replaced by its key meanwhile. Each
 * outcome commits once; a preparation that lost the job is thrown away.
 */
export interface PreparedJob<P> {
  leaseMs: number;
  prepare(payload: Record<string, unknown>, job: { id: number; runAt: string }): Promise<P>;
  commit(q: Tx, prepared: P, payload: Record<string, unknown>, job: { id: number; runAt: string }): Promise<void>;
}

/** A feature's job kinds and their handlers, registered together by compose(). */
export type JobHandlers = Readonly<Record<string, JobHandler>>;

/** As JobHandlers, with kinds that prepare their work outside the transaction. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind prepares a type of its own
export type AnyJobHandlers = Readonly<Record<string, JobHandler | PreparedJob<any>>>;

export interface SchedulerLogger {
  error(obj: object, msg: string): void;
}

const MAX_ATTEMPTS = 8;

interface DueJob {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  run_at: string;
  attempts: number;
}

export class Scheduler {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #handlers = new Map<string, JobHandler | PreparedJob<unknown>>();
  readonly #log: SchedulerLogger | undefined;
  readonly #loop: WorkLoop<number>;

  constructor(opts: { db: Db; clock: Clock; pollMs?: number; log?: SchedulerLogger }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#loop = new WorkLoop(() => this.#drain(), {
      pollMs: opts.pollMs ?? 250,
      onError: (err) => this.#log?.error({ err }, 'scheduler poll failed; retrying'),
    });
  }

  register(kind: string, handler: JobHandler | PreparedJob<unknown>): void {
    if (this.#handlers.has(kind)) throw new Error(`a handler for job "${kind}" is already registered`);
    this.#handlers.set(kind, handler);
  }

  registerAll(handlers: AnyJobHandlers): void {
    for (const [kind, handler] of Object.entries(handlers)) this.register(kind, handler);
  }

  /** The job kinds this scheduler runs. */
  get kinds(): string[] {
    return [...this.#handlers.keys()];
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Runs every job due by the clock's now, one at a time; returns how many ran. */
  runDue(): Promise<number> {
    return this.#loop.runNow();
  }

  async #drain(): Promise<number> {
    let ran = 0;
    for (;;) {
      const outcome = await this.#runOne();
      if (outcome === 'none') return ran;
      if (outcome === 'ran') ran++;
    }
  }

  async #runOne(): Promise<'none' | 'ran' | 'failed'> {
    const now = this.#clock.now();
    let picked: DueJob | undefined;
    let prepared: { handler: PreparedJob<unknown>; leasedUntil: Date } | undefined;
    try {
      await this.#db.tx(async (q) => {
        [picked] = await q.query<DueJob>(
          `SELECT id, kind, payload, run_at, attempts FROM jobs
           WHERE done_at IS NULL AND run_at <= $1 AND kind = ANY($2::text[])
           ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [now, [...this.#handlers.keys()]],
        );
        if (picked === undefined) return;
        // Only kinds this instance knows are picked: during a rolling deploy an older instance
        // leaves a newer kind of job to the instances that have its handler.
        const handler = this.#handlers.get(picked.kind) as JobHandler | PreparedJob<unknown>;
        if (typeof handler !== 'function') {
          // Leased, not run: its work is prepared once this transaction has committed.
          prepared = { handler, leasedUntil: new Date(now.getTime() + handler.leaseMs) };
          await q.query('UPDATE jobs SET run_at = $2 WHERE id = $1', [picked.id, prepared.leasedUntil]);
          return;
        }
        await handler(q, picked.payload, { id: picked.id, runAt: picked.run_at });
        await q.query('UPDATE jobs SET done_at = $2, attempts = attempts + 1 WHERE id = $1', [picked.id, now]);
      });
      if (picked !== undefined && prepared !== undefined) return await this.#runPrepared(picked, prepared.handler, prepared.leasedUntil, now);
    } catch (err) {
      if (picked === undefined) throw err;
      await this.#recordFailure(picked, err, now, prepared?.leasedUntil ?? null);
      return 'failed';
    }
    return picked === undefined ? 'none' : 'ran';
  }

  /** A leased job's preparation, then its commit if the lease still holds it (see PreparedJob). */
  async #runPrepared(job: DueJob, handler: PreparedJob<unknown>, leasedUntil: Date, now: Date): Promise<'ran' | 'failed'> {
    const meta = { id: job.id, runAt: job.run_at };
    const work = await handler.prepare(job.payload, meta);
    return this.#db.tx(async (q) => {
      const held = await q.query('SELECT 1 FROM jobs WHERE id = $1 AND done_at IS NULL AND run_at = $2 AND payload = $3::jsonb FOR UPDATE', [
        job.id,
        leasedUntil,
        JSON.stringify(job.payload), // as text: a payload of JSON null compares too
      ]);
      // Done by another worker after the lease ran out, or moved by its key to say something else.
      if (held.length === 0) return 'failed';
      await handler.commit(q, work, job.payload, meta);
      await q.query('UPDATE jobs SET done_at = $2, attempts = attempts + 1 WHERE id = $1', [job.id, now]);
      return 'ran';
    });
  }

  /** leasedUntil: a prepared job's lease; a job no longer under it (taken or moved) is left as it is. */
  async #recordFailure(job: DueJob, err: unknown, now: Date, leasedUntil: Date | null): Promise<void> {
    const attempts = job.attempts + 1;
    const giveUp = attempts >= MAX_ATTEMPTS;
    const retryAt = new Date(now.getTime() + Math.min(60_000, 1000 * 2 ** attempts));
    this.#log?.error({ err, jobId: job.id, kind: job.kind, attempts }, giveUp ? 'job failed for good' : 'job failed, will retry');
    await this.#db.query(
      `UPDATE jobs SET attempts = $2, last_error = $3, run_at = $4, failed = $5, done_at = CASE WHEN $5 THEN $6::timestamptz END
       WHERE id = $1 AND ($7::timestamptz IS NULL OR (run_at = $7 AND done_at IS NULL))`,
      [job.id, attempts, String((err as Error)?.message ?? err).slice(0, 2000), retryAt, giveUp, now, leasedUntil],
    );
  }
}
