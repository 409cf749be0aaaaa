// Retention (contract sections 16 and 17): in the background, device messages, announcement audio,
// webhook delivery logs, events and finished jobs older than RETENTION_DAYS, and audit entries older
// than AUDIT_RETENTION_DAYS, are deleted in small batches, each its own short statement, so no lock
// is held for long; also what heard speech, voice actions' view of open requests and displays'
// cooldowns leave behind, closed display requests' browser digests, failed sign-ins a day old and sessions that have ended, expired or gone idle. Requests and orders (what reports
// read, and their events' subjects) are never deleted: they are the store's history, kept on purpose. Each kind goes batch by batch until a batch comes back short.
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { forgetClosedRequestBrowsers } from '../cfh/display-store.ts';
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
  'browser_digests',
  'audit_entries',
  'sign_in_failures',
  'sessions',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** The times a sweep deletes before: RETENTION_DAYS's, AUDIT_RETENTION_DAYS's, and now. */
interface Cutoffs {
  window: Date;
  audit: Date;
  now: Date;
}

/** Failed sign-ins count for 15 minutes (people/throttle.ts); a day later they are of no use. */
const SIGN_IN_FAILURES_KEPT_MS = 86_400_000;

const DELETE: Record<RetentionKind, (q: Queryable, at: Cutoffs, limit: number) => Promise<number>> = {
  device_messages: (q, at, limit) => deleteMessagesQueuedBefore(q, at.window, limit),
  radio_audio: (q, at, limit) => store.deleteOldAudio(q, at.window, limit),
  // Before the events: the events' cascade then has nothing left to do in one big statement.
  webhook_deliveries: (q, at, limit) => store.deleteOldDeliveries(q, at.window, limit),
  events: (q, at, limit) => store.deleteOldEvents(q, at.window, limit),
  jobs: (q, at, limit) => store.deleteFinishedJobs(q, at.window, limit),
  radio_heard: (q, at, limit) => store.deleteOldHeard(q, at.window, limit),
  radio_open_requests: (q, at, limit) => store.deleteStaleOpenRequests(q, at.window, limit),
  display_presses: (q, at, limit) => store.deleteOldDisplayPresses(q, at.window, limit),
  // Not a window: a closed request's browser digest is of no use from the moment it closed.
  browser_digests: (q, _at, limit) => forgetClosedRequestBrowsers(q, limit),
  audit_entries: (q, at, limit) => store.deleteOldAuditEntries(q, at.audit, limit),
  sign_in_failures: (q, at, limit) => store.deleteOldSignInFailures(q, new Date(at.now.getTime() - SIGN_IN_FAILURES_KEPT_MS), limit),
  sessions: (q, at, limit) => store.deleteDeadSessions(q, at.now, limit),
};

export interface RetentionDeps {
  db: Pick<Db, 'statement'>;
  clock: Clock;
  retentionDays: number;
  /** Days that audit entries are kept (AUDIT_RETENTION_DAYS; default 400). */
  auditRetentionDays?: number;
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
    const now = clock.now();
    const at: Cutoffs = {
      window: new Date(now.getTime() - (this.#deps.windowMs ?? retentionDays * 86_400_000)),
      audit: new Date(now.getTime() - (this.#deps.auditRetentionDays ?? 400) * 86_400_000),
      now,
    };
    const deleted = Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, 0])) as Record<RetentionKind, number>;
    for (const kind of RETENTION_KINDS) {
      for (;;) {
        const n = await db.statement((q) => DELETE[kind](q, at, limit));
        deleted[kind] += n;
        this.#deps.countDeleted(kind, n);
        if (n < limit) break;
      }
    }
    return deleted;
  }
}
