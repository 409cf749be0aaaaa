// How many heard messages of one edge device are handled at once: each one reads the database,
// may claim a request and synthesizes an answer, so an edge device that publishes a flood must
// not take every connection and the speech engine from the others. Per edge device, one is
// handled at a time (in order, as said on the channel) and a few wait; beyond that a message is
// refused (logged; the device's QoS 1 delivery is already acknowledged by the broker, and the
// speaker can say it again).
export interface HeardGateOptions {
  /** Handled at once per edge device. */
  concurrency: number;
  /** Waiting per edge device; more are refused. */
  queueLimit: number;
  log?: { warn(obj: object, msg: string): void };
}

export const HEARD_CONCURRENCY_PER_EDGE = 1;
export const HEARD_QUEUE_PER_EDGE = 16;

interface EdgeLane {
  running: number;
  waiting: (() => void)[];
}

/** Wraps the handler of heard messages with the per-edge bound; the result says whether it ran. */
export function heardGate(
  handle: (edgeId: string, payload: Buffer) => Promise<unknown>,
  opts: HeardGateOptions = { concurrency: HEARD_CONCURRENCY_PER_EDGE, queueLimit: HEARD_QUEUE_PER_EDGE },
): (edgeId: string, payload: Buffer) => Promise<boolean> {
  const lanes = new Map<string, EdgeLane>();
  return async (edgeId, payload) => {
    let lane = lanes.get(edgeId);
    if (lane === undefined) {
      lane = { running: 0, waiting: [] };
      lanes.set(edgeId, lane);
    }
    if (lane.running >= opts.concurrency) {
      if (lane.waiting.length >= opts.queueLimit) {
        opts.log?.warn({ edgeId }, 'refused a heard message: this edge device has too many being handled');
        return false;
      }
      const mine = lane;
      // Its place is handed over by the one that ends (running stays counted meanwhile).
      await new Promise<void>((resolve) => mine.waiting.push(resolve));
    } else {
      lane.running++;
    }
    try {
      await handle(edgeId, payload);
      return true;
    } finally {
      const next = lane.waiting.shift();
      if (next !== undefined) {
        next();
      } else {
        lane.running--;
        if (lane.running === 0) lanes.delete(edgeId);
      }
    }
  };
}
