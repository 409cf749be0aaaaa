// One device inbox's delivery lane, as DeliveryLanes (lanes.ts) drives it: what is in flight for
// the device (the byte budget counts it), what waits behind it in memory, and the redelivery pass
// it wants. Its generation tells work that outlived the device's connection (or the lanes) apart.

export interface Lane {
  topic: string;
  /** Bytes given to the broker and not written out yet. */
  inFlight: number;
  /** Bumped when the device's last connection closes: what was in flight for it is gone. */
  generation: number;
  /** Waiting for room in the budget. */
  wake: (() => void) | null;
  running: boolean;
  /** A pass is wanted (the device subscribed, or messages were left in the outbox). */
  passWanted: boolean;
  /** The device subscribed: send everything not acked, even what this lane sent it already. */
  resendAll: boolean;
  queue: { id: number; payload: Buffer }[];
  queuedBytes: number;
  /** New messages were left in the outbox (the queue was full): a pass picks them up. */
  backlog: boolean;
  /** Ids sent on this lane since the device last subscribed: never twice for one pass. */
  sent: Set<number>;
  /** Passes run for callers waiting on them (redeliverTo). */
  passDone: ((sent: number) => void)[];
}

export function newLane(topic: string): Lane {
  return {
    topic,
    inFlight: 0,
    generation: 0,
    wake: null,
    running: false,
    passWanted: false,
    resendAll: false,
    queue: [],
    queuedBytes: 0,
    backlog: false,
    sent: new Set(),
    passDone: [],
  };
}

/** The device's last connection closed: what was written for it is gone, and so is its queue
 * (published, not acked: it comes again with its next subscription). A new generation. */
export function resetLane(lane: Lane): void {
  lane.generation++;
  lane.inFlight = 0;
  lane.queue = [];
  lane.queuedBytes = 0;
  lane.backlog = false;
  lane.passWanted = false;
  lane.sent.clear();
}
