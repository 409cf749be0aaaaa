// Durable delayed work (a delayed close, the end of a cool-off, a CFH timeout): the runner.
// A job is a row with a due time (queue.ts writes it). A worker picks one due row with FOR UPDATE SKIP LOCKED and runs
// its handler in that same transaction, which also marks it done: so with any number of instances
// a job's effects commit exactly once, and a job that fell due while every instance was down runs
// at the next start. Handlers touch only the database; messages to devices go through the outbox,
// and the job's commit wakes the dispatcher.
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { WorkLoop } from './loop.ts';

export type JobHandler = (q: Tx, payload: Record<string, unknown>, job: { id: number; runAt: string }) => Promise<void>;

/** A feature's job kinds and their handlers, registered together by compose(). */
export type JobHandlers = Readonly<Record<string, JobHandler>>;

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
  readonly #handlers = new Map<string, JobHandler>();
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

  register(kind: string, handler: JobHandler): void {
    if (this.#handlers.has(kind)) throw new Error(`a handler for job "${kind}" is already registered`);
    this.#handlers.set(kind, handler);
  }

  registerAll(handlers: JobHandlers): void {
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
        const handler = this.#handlers.get(picked.kind) as JobHandler;
        await handler(q, picked.payload, { id: picked.id, runAt: picked.run_at });
        await q.query('UPDATE jobs SET done_at = $2, attempts = attempts + 1 WHERE id = $1', [picked.id, now]);
      });
    } catch (err) {
      if (picked === undefined) throw err;
      await this.#recordFailure(picked, err, now);
      return 'failed';
    }
    return picked === undefined ? 'none' : 'ran';
  }

  async #recordFailure(job: DueJob, err: unknown, now: Date): Promise<void> {
    const attempts = job.attempts + 1;
    const giveUp = attempts >= MAX_ATTEMPTS;
    const retryAt = new Date(now.getTime() + Math.min(60_000, 1000 * 2 ** attempts));
    this.#log?.error({ err, jobId: job.id, kind: job.kind, attempts }, giveUp ? 'job failed for good' : 'job failed, will retry');
    await this.#db.query(
      `UPDATE jobs SET attempts = $2, last_error = $3, run_at = $4, failed = $5, done_at = CASE WHEN $5 THEN $6::timestamptz END
       WHERE id = $1`,
      [job.id, attempts, String((err as Error)?.message ?? err).slice(0, 2000), retryAt, giveUp, now],
    );
  }
}
