// Retention (contract section 16): in the background, device messages, announcement audio, webhook
// delivery logs, events and finished jobs older than RETENTION_DAYS are deleted in small batches,
// each its own short statement, so no lock is held for long; also what heard speech, voice actions'
// view of open requests and displays' cooldowns leave behind. Requests and orders (what reports
// read, and their events' subjects) are never deleted: they are the store's history, kept on purpose. Each kind goes batch by batch until a batch comes back short.
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { deleteMessagesQueuedBefore } from '../devices/outbox.ts';
import { WorkLoop } from '../work/loop.ts';
import * as store from './store.ts';

export const RETENTION_KINDS = [
  'device_messages',
  'radio_audio',
  'webhook_deliveries',
  'events',
  'jobs',
  'radio_heard',
  'radio_open_requests',
  'display_presses',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

const DELETE: Record<RetentionKind, (q: Queryable, cutoff: Date, limit: number) => Promise<number>> = {
  device_messages: deleteMessagesQueuedBefore,
  radio_audio: store.deleteOldAudio,
  // Before the events: the events' cascade then has nothing left to do in one big statement.
  webhook_deliveries: store.deleteOldDeliveries,
  events: store.deleteOldEvents,
  jobs: store.deleteFinishedJobs,
  radio_heard: store.deleteOldHeard,
  radio_open_requests: store.deleteStaleOpenRequests,
  display_presses: store.deleteOldDisplayPresses,
};

export interface RetentionDeps {
  db: Pick<Db, 'statement'>;
  clock: Clock;
  retentionDays: number;
  /** Told how many rows of a kind went (the retention counter of /metrics). */
  countDeleted: (kind: RetentionKind, rows: number) => void;
  onError: (err: unknown) => void;
  /** Rows per statement (default 1000). */
  batchSize?: number;
  /** How often it looks (default hourly). */
  pollMs?: number;
  /** The window in milliseconds, replacing retentionDays (RETENTION_TEST_SECONDS, soak tests only). */
  windowMs?: number;
}

export class Retention {
  readonly #deps: RetentionDeps;
  readonly #loop: WorkLoop<Record<RetentionKind, number>>;

  constructor(deps: RetentionDeps) {
    this.#deps = deps;
    this.#loop = new WorkLoop(() => this.#sweep(), { pollMs: deps.pollMs ?? 3_600_000, onError: deps.onError });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One sweep now: the rows deleted, by kind. */
  runNow(): Promise<Record<RetentionKind, number>> {
    return this.#loop.runNow();
  }

  async #sweep(): Promise<Record<RetentionKind, number>> {
    const { db, clock, retentionDays } = this.#deps;
    const limit = this.#deps.batchSize ?? 1000;
    const cutoff = new Date(clock.now().getTime() - (this.#deps.windowMs ?? retentionDays * 86_400_000));
    const deleted = Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, 0])) as Record<RetentionKind, number>;
    for (const kind of RETENTION_KINDS) {
      for (;;) {
        const n = await db.statement((q) => DELETE[kind](q, cutoff, limit));
        deleted[kind] += n;
        this.#deps.countDeleted(kind, n);
        if (n < limit) break;
      }
    }
    return deleted;
  }
}
