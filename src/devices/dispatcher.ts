// The dispatcher of the device outbox, one per process: a WorkLoop that publishes what commits
// queued (woken by the `device_outbox` commit signal from any instance, and polling for what falls
// due), and with an external broker sweeps for unacked messages due to be sent again. The loop's
// turn also runs the dispatches and redeliveries asked for from outside (stop(), tests, a device
// subscribing on an external broker), so this process's outbox transactions run one at a time.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { WorkLoop } from '../work/loop.ts';
import { dispatchBatch, redeliverTopic, type DispatchContext } from './dispatch.ts';
import { hasUnpublished, topicsDueForRedelivery } from './store.ts';
import type { GatewayLogger, Transport } from './transport.ts';

export interface DispatcherOptions {
  db: Db;
  clock: Clock;
  log: GatewayLogger;
  pollMs: number;
  /** Messages locked and published per transaction. */
  batchSize: number;
  /** false: nothing is published until dispatchPending() is called (tests that stop "between"). */
  autoDispatch: boolean;
  /** The broker is an external one: unacked messages are redelivered by a sweep. */
  external: boolean;
  /** What the dispatcher publishes on, once the broker side is started. */
  transport: () => Transport | null;
  /** Work the gateway's settle() waits for. */
  track: <T>(work: Promise<T>) => Promise<T>;
}

/** External broker: first redelivery of an unacked message after this long, doubling. */
const REDELIVER_AFTER_S = 30;
const SWEEP_EVERY_MS = 5_000;

export class OutboxDispatcher {
  readonly #o: DispatcherOptions;
  readonly #loop: WorkLoop<void>;
  #started = false;
  /** A commit (or the broker's return) woke the loop: it publishes without looking first. */
  #woken = false;
  #lastSweep = 0;
  #offCommits: (() => void) | null = null;

  constructor(opts: DispatcherOptions) {
    this.#o = opts;
    this.#loop = new WorkLoop(() => opts.track(this.#cycle()), {
      pollMs: opts.pollMs,
      // The database or broker being away is logged once a minute, not at every poll.
      onError: (err) => opts.log.error({ err }, 'device dispatcher failed; retrying'),
    });
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    // Woken by the commits that queued device messages, on any instance.
    this.#offCommits = this.#o.db.commits.on('device_outbox', () => this.notify());
    this.#loop.start();
  }

  /** Stops polling and publishes what is still queued (nothing new comes: the HTTP server is closed). */
  async stop(): Promise<void> {
    this.#started = false;
    this.#offCommits?.();
    this.#offCommits = null;
    await this.#loop.stop();
    if (this.#o.autoDispatch && this.#o.transport()?.up === true) {
      await this.dispatchPending().catch((err: unknown) =>
        this.#o.log.error({ err }, 'device dispatcher failed at stop; what is queued goes out at the next start'),
      );
    }
  }

  /** Wakes the dispatcher now; never blocks. */
  notify(): void {
    if (!this.#started || !this.#o.autoDispatch) return;
    this.#woken = true;
    this.#loop.wake();
  }

  /** Publishes everything queued and due, batch after batch; returns how many were published. */
  dispatchPending(): Promise<number> {
    return this.#exclusive(() => this.#drain());
  }

  /** Sends a topic again, in order, what it was sent and has not acked. */
  redeliver(topic: string): Promise<number> {
    return this.#exclusive(() => this.#redeliver(topic, false));
  }

  /** External broker: redelivers the topics whose unacked messages are due again. */
  redeliverDue(): Promise<number> {
    return this.#exclusive(() => this.#redeliverDue());
  }

  /** What the outbox transactions need, or null while the broker is away. */
  context(): DispatchContext | null {
    const transport = this.#o.transport();
    if (transport === null || !transport.up) return null;
    const { db, clock, log, external } = this.#o;
    return { db, transport, now: clock.now(), redeliverAfterS: external ? REDELIVER_AFTER_S : null, log };
  }

  /** Runs in the loop's turn: after the run in progress, never beside one. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#o.track(this.#loop.exclusive(fn));
  }

  /** One turn of the loop: publishes what is queued (a poll looks first, in a read, so an idle
   * poll costs no transaction), and with an external broker sweeps for redeliveries due. */
  async #cycle(): Promise<void> {
    const woken = this.#woken;
    this.#woken = false;
    if (this.#o.transport()?.up !== true) return;
    const { db, clock } = this.#o;
    if (this.#o.autoDispatch && (woken || (await hasUnpublished(db, clock.now())))) await this.#drain();
    if (this.#o.external && Date.now() - this.#lastSweep >= SWEEP_EVERY_MS) {
      this.#lastSweep = Date.now();
      await this.#redeliverDue();
    }
  }

  async #drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const c = this.context();
      if (c === null) return total;
      const { published, more } = await dispatchBatch(c, this.#o.batchSize);
      total += published;
      // A batch that took every due row it saw ends the drain: looking again would be a
      // transaction for nothing (rows queued since then come with their own notify()).
      if (!more) return total;
    }
  }

  async #redeliverDue(): Promise<number> {
    let total = 0;
    for (const topic of await topicsDueForRedelivery(this.#o.db, this.#o.clock.now(), 50)) {
      total += await this.#redeliver(topic, true);
    }
    return total;
  }

  async #redeliver(topic: string, onlyIfDue: boolean): Promise<number> {
    const c = this.context();
    return c === null ? 0 : redeliverTopic(c, topic, onlyIfDue);
  }
}
