// Delivery lanes of the embedded broker: one per device inbox, which sends that device's messages
// one at a time, in order, with at most DEVICE_INFLIGHT_BYTES written for it and not yet taken by
// its socket (one message larger than that goes alone). A device that never reads holds its
// budget and no more, however often it subscribes again.
//
// Two things feed a lane: the dispatcher's first publishes (offer), and redelivery (a pass over
// what the device has not acked, started when it subscribes; subscriptions that come while a pass
// runs make one more pass after it, not one each). A new message for a device whose pass is
// pending or running waits behind it, in memory up to the budget; beyond that it stays in the
// outbox (already marked published) and a pass after the current one sends it: a device gets its
// messages in order, and the memory a lane holds is bounded by two budgets.
//
// A lane's state is lane.ts; the batched look-ups of what devices have not acked, unacked-lookups.ts.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { newLane, resetLane, type Lane } from './lane.ts';
import { markPublished, messagesByIds } from './store.ts';
import { messageJson, type GatewayLogger } from './transport.ts';
import { UnackedLookups, type Unacked } from './unacked-lookups.ts';

export interface LaneBroker {
  /** Takes the message; `onWritten` once the broker is done with it (written out, or dropped). */
  publish(topic: string, payload: Buffer, onWritten: () => void): Promise<void>;
  /** Bytes written for the inbox's device that its sockets have not handed to the system yet. */
  queuedBytes(topic: string): number;
}

/** How often a lane waiting for room looks at its device's sockets again (they tell no one when they drain). */
const RECHECK_MS = 20;

export class DeliveryLanes {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #broker: LaneBroker;
  readonly #budget: number;
  readonly #log: GatewayLogger;
  readonly #lanes = new Map<string, Lane>();
  readonly #unacked: UnackedLookups;
  /** Lanes doing work (not waiting for room): settle() waits for them. */
  #active = 0;
  #quiet: (() => void)[] = [];
  #stopped = false;

  constructor(opts: { db: Db; clock: Clock; broker: LaneBroker; budgetBytes: number; log: GatewayLogger }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#broker = opts.broker;
    this.#budget = opts.budgetBytes;
    this.#log = opts.log;
    this.#unacked = new UnackedLookups({ db: opts.db, clock: opts.clock });
  }

  /** A first publish from the dispatcher: sent now if its lane is free, else queued behind. Never waits. */
  offer(topic: string, id: number, payload: Buffer): Promise<void> {
    if (this.#stopped) return Promise.reject(new Error('the device lanes are stopped'));
    const lane = this.#lane(topic);
    if (!lane.running && lane.queue.length === 0 && this.#hasRoom(lane, payload.length)) return this.#send(lane, Number(id), payload);
    if (!lane.backlog && lane.queuedBytes + payload.length <= this.#budget) {
      lane.queue.push({ id: Number(id), payload });
      lane.queuedBytes += payload.length;
    } else {
      lane.backlog = true; // marked published: the pass after this work sends it from the outbox
    }
    this.#start(lane);
    return Promise.resolve();
  }

  /** The device subscribed: a pass over what it has not acked (one more if one is under way). */
  redeliver(topic: string): Promise<number> {
    if (this.#stopped) return Promise.resolve(0);
    const lane = this.#lane(topic);
    lane.passWanted = true;
    lane.resendAll = true;
    const done = new Promise<number>((resolve) => lane.passDone.push(resolve));
    this.#start(lane);
    return done;
  }

  /** The device's last connection closed: what was written for it is gone, and so is its queue
   * (published, not acked: it comes again with its next subscription). */
  closed(topic: string): void {
    const lane = this.#lanes.get(topic);
    if (lane === undefined) return;
    resetLane(lane);
    this.#wake(lane);
    if (!lane.running) this.#lanes.delete(topic);
  }

  /** Resolves once no lane is doing work (lanes waiting for a device to read do not count). */
  quiet(): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#quiet.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
    for (const lane of this.#lanes.values()) {
      lane.generation++;
      this.#wake(lane);
    }
  }

  #lane(topic: string): Lane {
    let lane = this.#lanes.get(topic);
    if (lane === undefined) {
      lane = newLane(topic);
      this.#lanes.set(topic, lane);
    }
    return lane;
  }

  /** Held for the device: given to the broker and not written yet, plus what its sockets buffer. */
  #held(lane: Lane): number {
    return lane.inFlight + this.#broker.queuedBytes(lane.topic);
  }

  #hasRoom(lane: Lane, bytes: number): boolean {
    const held = this.#held(lane);
    return held === 0 || held + bytes <= this.#budget;
  }

  #send(lane: Lane, id: number, payload: Buffer): Promise<void> {
    const generation = lane.generation;
    lane.inFlight += payload.length;
    // Remembered while the lane works through a pass and its queue (so nothing goes twice in one).
    if (lane.running) lane.sent.add(id);
    return this.#broker.publish(lane.topic, payload, () => {
      if (lane.generation !== generation) return;
      lane.inFlight -= payload.length;
      this.#wake(lane);
      this.#forgetIfIdle(lane);
    });
  }

  /** A lane with nothing to do and nothing in flight is dropped: one per busy device, not per device ever seen. */
  #forgetIfIdle(lane: Lane): void {
    if (lane.running || lane.inFlight > 0 || lane.queue.length > 0 || lane.passWanted || lane.backlog) return;
    lane.sent.clear();
    if (this.#lanes.get(lane.topic) === lane) this.#lanes.delete(lane.topic);
  }

  #wake(lane: Lane): void {
    const wake = lane.wake;
    lane.wake = null;
    wake?.();
  }

  /** Waits until `bytes` fit; false if the lane was reset (or stopped) meanwhile. */
  async #room(lane: Lane, bytes: number, generation: number): Promise<boolean> {
    while (!this.#hasRoom(lane, bytes)) {
      if (lane.generation !== generation || this.#stopped) return false;
      this.#idle(-1);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.#wake(lane), RECHECK_MS);
        lane.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#idle(+1);
    }
    return lane.generation === generation && !this.#stopped;
  }

  #idle(delta: number): void {
    this.#active += delta;
    if (this.#active === 0) for (const resolve of this.#quiet.splice(0)) resolve();
  }

  #start(lane: Lane): void {
    if (lane.running || this.#stopped) return;
    lane.running = true;
    this.#idle(+1);
    this.#run(lane)
      .catch((err: unknown) => this.#log.error({ err, topic: lane.topic }, 'redelivery failed'))
      .finally(() => {
        lane.running = false;
        this.#idle(-1);
        if (this.#stopped) for (const resolve of lane.passDone.splice(0)) resolve(0);
        // Work offered between the loop's last look and now would otherwise wait for the next offer.
        if (lane.queue.length > 0 || lane.passWanted || lane.backlog) this.#start(lane);
        else this.#forgetIfIdle(lane);
      });
  }

  async #run(lane: Lane): Promise<void> {
    for (;;) {
      const generation = lane.generation;
      if (this.#stopped) return;
      if (lane.passWanted) {
        lane.passWanted = false;
        if (lane.resendAll) lane.sent.clear();
        lane.resendAll = false;
        const waiting = lane.passDone.splice(0);
        const sent = await this.#pass(lane, generation);
        for (const resolve of waiting) resolve(sent);
        continue;
      }
      const next = lane.queue.shift();
      if (next !== undefined) {
        lane.queuedBytes -= next.payload.length;
        if (lane.sent.has(next.id)) continue; // a pass sent it already
        if (!(await this.#room(lane, next.payload.length, generation))) continue;
        await this.#send(lane, next.id, next.payload).catch(() => {});
        continue;
      }
      if (lane.backlog) {
        lane.backlog = false;
        lane.passWanted = true;
        continue;
      }
      return;
    }
  }

  /** Sends again, in order, what the device has not acked and this lane has not sent it since it subscribed. */
  async #pass(lane: Lane, generation: number): Promise<number> {
    const ids = (await this.#unacked.of(lane.topic)).filter((m) => !lane.sent.has(m.id));
    let sent = 0;
    for (let i = 0; i < ids.length;) {
      if (!(await this.#room(lane, ids[i]?.bytes ?? 0, generation))) return sent;
      // As many as fit in the room left (at least one), fetched together.
      let room = this.#budget - this.#held(lane);
      const chunk: number[] = [];
      while (i < ids.length && (chunk.length === 0 || (ids[i]?.bytes ?? 0) <= room) && chunk.length < 50) {
        const m = ids[i++] as Unacked;
        room -= m.bytes;
        chunk.push(m.id);
      }
      const rows = await this.#db.statement((q) => messagesByIds(q, chunk));
      if (lane.generation !== generation || this.#stopped) return sent;
      const ok: number[] = [];
      for (const row of rows) {
        try {
          await this.#send(lane, Number(row.id), messageJson(row));
          ok.push(row.id);
        } catch {
          return sent; // the broker is closing: the rest comes with the next subscription
        }
      }
      sent += ok.length;
      await this.#db.statement((q) => markPublished(q, ok, this.#clock.now(), null));
    }
    if (sent > 0) this.#log.info({ topic: lane.topic, messages: sent }, 'redelivered unacknowledged device messages');
    return sent;
  }
}
