// A load of orders and claims spread over several instances, with a ledger of everything the
// service acknowledged (every 201/200 a client saw), for the fault tests to check afterwards.
import type pg from 'pg';
import type { Answer, Api, RelWorld } from './clients.ts';

export interface Target {
  name: string;
  api: Api;
}

export interface Outcome {
  target: string;
  /** The phase when the request was sent; `crossed`: the phase changed before it was answered. */
  phase: string;
  crossed: boolean;
  op: string;
  status: number;
  code: unknown;
  error: string | null;
  retryAfter: string | null;
  ms: number;
}

export interface Ledger {
  /** Orders acknowledged by L2 (by row id), with what later acknowledgements said of them. */
  orders: Map<number, { cabinetId: number; openCode: string; agrees: number; completedAt: string | null }>;
  /** CFH requests acknowledged by C0 (by message_id), with the claim acknowledged as won. */
  requests: Map<string, { id: number; claimedBy: string | null }>;
}

/** Answers a client may get from a healthy service under this load: success, or a domain refusal
 * (a cabinet still occupied or cooling off after an unanswered request). */
export const healthy = (o: Outcome) => (o.status >= 200 && o.status < 300) || o.status === 409;

export class Load {
  readonly ledger: Ledger = { orders: new Map(), requests: new Map() };
  readonly outcomes: Outcome[] = [];
  phase = 'start';
  #stopped = false;
  #next = 0;
  #running: Promise<void>[] = [];
  readonly #targets: () => Target[];
  readonly #w: RelWorld;

  /** targets(): the instances to spread requests over, read at every request. */
  constructor(w: RelWorld, targets: () => Target[]) {
    this.#w = w;
    this.#targets = targets;
  }

  start(workers: number, cabinets: number[]): void {
    for (let k = 0; k < workers; k++) {
      const mine = cabinets.filter((_, i) => i % workers === k);
      this.#running.push(this.#worker(k, mine));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#running);
  }

  /** Outcomes sent and answered within one phase, optionally from one instance. */
  of(phase: string, target?: string): Outcome[] {
    return this.outcomes.filter((o) => o.phase === phase && !o.crossed && (target === undefined || o.target === target));
  }

  async #send(op: string, call: (api: Api) => Promise<Answer>): Promise<Answer> {
    const targets = this.#targets();
    const target = targets[this.#next++ % targets.length] as Target;
    const phase = this.phase;
    const answer = await call(target.api);
    // As a real client would: no answer at all (an instance down) is not retried in a tight loop.
    if (answer.status === 0) await new Promise((r) => setTimeout(r, 20));
    this.outcomes.push({
      target: target.name,
      phase,
      crossed: phase !== this.phase,
      op,
      status: answer.status,
      code: answer.body.code,
      error: answer.error,
      retryAfter: answer.retryAfter,
      ms: answer.ms,
    });
    return answer;
  }

  async #worker(k: number, cabinets: number[]): Promise<void> {
    // Bounded: the test stops the load long before this many rounds.
    for (let i = 0; i < 10_000 && !this.#stopped && cabinets.length > 0; i++) {
      const cabinetId = cabinets[i % cabinets.length] as number;
      const order = await this.#send('L2', (api) => api.createOrder(cabinetId, k * 100_000 + i));
      if (order.status === 201) {
        const openCode = order.body.open_code as string;
        const entry = { cabinetId, openCode, agrees: 0, completedAt: null as string | null };
        this.ledger.orders.set(order.body.id as number, entry);
        if ((await this.#send('L5', (api) => api.customer(openCode, 'agree'))).status === 200) entry.agrees++;
        // Every third order leaves its cabinet cooling off for a second: a delayed job per order.
        const done = await this.#send('L6', (api) => api.completeByCode(openCode, i % 3 === 0 ? { delay: 1 } : {}));
        if (done.status === 200) entry.completedAt = done.body.completed_at as string;
      }
      const request = await this.#send('C0', (api) => api.createRequest());
      if (request.status === 201) {
        const messageId = request.body.message_id as string;
        const entry = { id: request.body.id as number, claimedBy: null as string | null };
        this.ledger.requests.set(messageId, entry);
        const who = `w${k}-${i}`;
        const claim = await this.#send('C1', (api) => api.claim(messageId, who));
        if (claim.status === 200 && claim.body.success === true) entry.claimedBy = who;
      }
    }
  }
}

const wire = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * What was acknowledged is stored as it was acknowledged, and no order or claim is half-written.
 * Returns a list of problems (empty: all holds), so a failure shows every broken row at once.
 */
export async function checkLedgerAndInvariants(db: pg.Pool, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  const orderIds = [...ledger.orders.keys()];
  const { rows: orders } = await db.query(
    `SELECT o.id, o.cabinet_id, o.open_code, ${wire('o.completed_at')} AS completed_at,
       (SELECT count(*)::int FROM locker_order_events e WHERE e.locker_order_id = o.id AND e.kind = 'agree') AS agrees
     FROM locker_orders o WHERE o.id = ANY($1::int[])`,
    [orderIds],
  );
  const stored = new Map(orders.map((o: { id: number }) => [o.id, o]));
  for (const [id, acked] of ledger.orders) {
    const row = stored.get(id) as { cabinet_id: number; open_code: string; completed_at: string | null; agrees: number } | undefined;
    if (row === undefined) problems.push(`acknowledged order ${id} is missing`);
    else {
      if (row.cabinet_id !== acked.cabinetId || row.open_code !== acked.openCode) problems.push(`order ${id} is not what was acknowledged`);
      if (acked.completedAt !== null && row.completed_at !== acked.completedAt)
        problems.push(`order ${id}: acknowledged completion ${acked.completedAt}, stored ${row.completed_at}`);
      if (row.agrees < acked.agrees) problems.push(`order ${id}: ${acked.agrees} agree acknowledged, ${row.agrees} recorded`);
    }
  }

  const { rows: cabinets } = await db.query(
    `SELECT c.id, c.occupied, c.cool_off_until,
       (SELECT count(*)::int FROM locker_orders o WHERE o.cabinet_id = c.id AND o.completed_at IS NULL AND o.canceled_at IS NULL) AS open_orders
     FROM cabinets c`,
  );
  for (const c of cabinets as { id: number; occupied: boolean; cool_off_until: Date | null; open_orders: number }[]) {
    const shouldBeOccupied = c.open_orders > 0 || c.cool_off_until !== null;
    if (c.open_orders > 1) problems.push(`cabinet ${c.id} has ${c.open_orders} open orders`);
    if (c.occupied !== shouldBeOccupied)
      problems.push(`cabinet ${c.id}: occupied ${c.occupied} with ${c.open_orders} open orders, cool-off ${String(c.cool_off_until)}`);
    if (c.cool_off_until !== null && c.open_orders > 0) problems.push(`cabinet ${c.id} cools off under an open order`);
  }
  const { rows: badOrders } = await db.query('SELECT id FROM locker_orders WHERE completed_at IS NOT NULL AND updated_at <> completed_at');
  for (const o of badOrders as { id: number }[]) problems.push(`order ${o.id}: completed but updated_at differs from completed_at`);
  const { rows: unlogged } = await db.query(
    `SELECT c.command_id FROM cabinet_commands c
     WHERE c.executed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM device_outbox d WHERE d.message_key = c.command_id::text)`,
  );
  for (const c of unlogged as { command_id: string }[]) problems.push(`command ${c.command_id} was carried out but never queued for the locker`);

  const { rows: requests } = await db.query(
    `SELECT r.message_id, r.is_claimed, r.claimed_by, r.claimed_at,
       (SELECT count(*)::int FROM cfh_request_events e WHERE e.request_id = r.id AND e.kind = 'created') AS created_events,
       (SELECT count(*)::int FROM cfh_request_events e WHERE e.request_id = r.id AND e.kind = 'claimed') AS claimed_events,
       (SELECT count(*)::int FROM jobs j WHERE j.kind = 'cfh.timeout' AND (j.payload->>'request_id')::bigint = r.id) AS timeout_jobs
     FROM cfh_requests r`,
  );
  const byMessage = new Map(requests.map((r: { message_id: string }) => [r.message_id, r]));
  for (const r of requests as {
    message_id: string;
    is_claimed: boolean;
    claimed_by: string | null;
    claimed_at: Date | null;
    created_events: number;
    claimed_events: number;
    timeout_jobs: number;
  }[]) {
    if (r.created_events !== 1 || r.timeout_jobs !== 1)
      problems.push(`request ${r.message_id}: ${r.created_events} created events, ${r.timeout_jobs} timeout jobs`);
    if (r.is_claimed !== (r.claimed_by !== null) || r.is_claimed !== (r.claimed_at !== null))
      problems.push(`request ${r.message_id}: is_claimed ${r.is_claimed} with claimed_by ${r.claimed_by}`);
    if (r.claimed_events !== (r.is_claimed ? 1 : 0)) problems.push(`request ${r.message_id}: is_claimed ${r.is_claimed} with ${r.claimed_events} claim events`);
  }
  for (const [messageId, acked] of ledger.requests) {
    const row = byMessage.get(messageId) as { claimed_by: string | null } | undefined;
    if (row === undefined) problems.push(`acknowledged request ${messageId} is missing`);
    else if (acked.claimedBy !== null && row.claimed_by !== acked.claimedBy)
      problems.push(`request ${messageId}: claim by ${acked.claimedBy} acknowledged, stored ${row.claimed_by}`);
  }
  return problems;
}
