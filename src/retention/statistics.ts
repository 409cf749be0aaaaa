// Planner statistics kept fresh where the database does not do it itself: the embedded database
// (PGlite has no autovacuum) and a PostgreSQL whose autovacuum is off. Without them a statement
// planned while its table was small keeps that plan (a scan of the whole table, a join that
// reads a queue end to end) as the table grows: measured on webhook deliveries, the lag of a
// 60 s run at 1,000 events a second grew to 5 s, and stayed near 200 ms once tables were analyzed.
// Every pollMs, each table that has grown by a fifth since it was last analyzed is analyzed again,
// a table at a time (the embedded database's one connection serves requests between two).
import type { Db } from '../db/db.ts';
import { WorkLoop } from '../jobs/loop.ts';
import * as store from './store.ts';

export interface StatisticsDeps {
  db: Pick<Db, 'statement'>;
  onError: (err: unknown) => void;
  /** How often it looks (default 10 s: a queue table filling from empty outgrows its plans in seconds). */
  pollMs?: number;
}

export class Statistics {
  readonly #db: StatisticsDeps['db'];
  readonly #onError: StatisticsDeps['onError'];
  readonly #loop: WorkLoop<string[]>;
  #stopping = false;

  constructor(deps: StatisticsDeps) {
    this.#db = deps.db;
    this.#onError = deps.onError;
    this.#loop = new WorkLoop(() => this.#refresh(), { pollMs: deps.pollMs ?? 10_000, onError: deps.onError });
  }

  start(): void {
    this.#stopping = false;
    this.#loop.start();
  }

  /** Stops looking; a pass in progress ends after the table it is analyzing. */
  stop(): Promise<void> {
    this.#stopping = true;
    return this.#loop.stop();
  }

  /** One look now: the tables analyzed (schema-qualified, quoted names). */
  runNow(): Promise<string[]> {
    return this.#loop.runNow();
  }

  async #refresh(): Promise<string[]> {
    const tables = await this.#db.statement((q) => store.grownTables(q));
    const analyzed: string[] = [];
    for (const table of tables) {
      if (this.#stopping) break;
      try {
        await this.#db.statement((q) => store.analyzeTable(q, table));
        analyzed.push(table);
      } catch (err) {
        // One table that cannot be analyzed (dropped meanwhile, a timeout) does not hold the others back.
        this.#onError(err);
      }
    }
    return analyzed;
  }
}
