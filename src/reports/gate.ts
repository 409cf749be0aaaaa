// How many reports run at once (issue 36, item 1): a report holds one of the pool's connections
// while it reads, so a credential (a token, a person's session) may run REPORTS_PER_CREDENTIAL at
// once and the instance REPORTS_IN_FLIGHT, well below the pool's 10 connections: whatever the
// reports' callers do, the store's own requests keep the rest of the pool and of the cores (on a
// 2 shared cores, beside 20 clients asking ten-year reports, three at a time took C5's p99 to 6.8
// times its own; one at a time left it within the noise of its own: bench/reports/long-range.ts). A report past its credential's
// share is refused at once (429); one past the instance's waits its turn for a moment, then 503.
import type { OrganizationActor } from '../access/actor.ts';
import { AppError } from '../http/errors.ts';

export const REPORTS_PER_CREDENTIAL = 2;
export const REPORTS_IN_FLIGHT = 1;
/** How long a report waits for the instance's turn, and how many may wait. */
export const REPORT_WAIT_MS = 2_000;
export const REPORTS_WAITING = 32;

export const tooManyReports = () =>
  new AppError(429, 'too_many_reports', `at most ${REPORTS_PER_CREDENTIAL} reports at once per credential; see Retry-After`, {
    headers: { 'retry-after': '1' },
  });
const busy = () => new AppError(503, 'unavailable', 'too many reports are running; try again shortly', { headers: { 'retry-after': '2' } });

export interface GateLimits {
  perCredential: number;
  inFlight: number;
  waitMs: number;
  waiting: number;
}

/** One per instance (compose() makes it), shared by the reports API and the console's Reports page. */
export class ReportGate {
  readonly #limits: GateLimits;
  readonly #byCredential = new Map<string, number>();
  #running = 0;
  readonly #queue: (() => void)[] = [];

  constructor(limits: Partial<GateLimits> = {}) {
    this.#limits = { perCredential: REPORTS_PER_CREDENTIAL, inFlight: REPORTS_IN_FLIGHT, waitMs: REPORT_WAIT_MS, waiting: REPORTS_WAITING, ...limits };
  }

  /** Runs `read` as one of `credential`'s reports, when its share and the instance's allow. */
  async run<T>(credential: string, read: () => Promise<T>): Promise<T> {
    const mine = this.#byCredential.get(credential) ?? 0;
    if (mine >= this.#limits.perCredential) throw tooManyReports();
    this.#byCredential.set(credential, mine + 1);
    try {
      await this.#enter();
      try {
        return await read();
      } finally {
        this.#leave();
      }
    } finally {
      const left = (this.#byCredential.get(credential) ?? 1) - 1;
      if (left === 0) this.#byCredential.delete(credential);
      else this.#byCredential.set(credential, left);
    }
  }

  async #enter(): Promise<void> {
    if (this.#running < this.#limits.inFlight) {
      this.#running++;
      return;
    }
    if (this.#queue.length >= this.#limits.waiting) throw busy();
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.#queue.indexOf(turn);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(busy());
      }, this.#limits.waitMs);
      this.#queue.push(turn);
    });
  }

  /** A slot freed goes to the longest waiting report, else back to the instance. */
  #leave(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#running--;
    else next();
  }
}

/** The credential an actor's reports count against: its token, or its person (whatever session). */
export function credentialOf(actor: OrganizationActor): string {
  switch (actor.kind) {
    case 'api_token':
      return `token:${actor.tokenId}`;
    case 'person':
      return `person:${actor.personId}`;
    case 'device':
      return `device:${actor.device}:${actor.deviceId}`;
  }
}
