// The dispatcher's two transactions over the outbox: publishing what is queued (first publish) and
// publishing again, in order, what a device has not acknowledged (redelivery). The gateway decides
// when they run; these decide what is published and what is marked.
import type { Db } from '../db/db.ts';
import { forgetSuperseded, hasDueRedelivery, lockTopic, markFailed, markPublished, messagesByIds, pickUnpublished, unackedOfTopic } from './store.ts';
import { publishAll, type GatewayLogger, type Transport } from './transport.ts';

const REDELIVERY_CHUNK = 50;
const REDELIVERY_MAX = 1_000;

export interface DispatchContext {
  db: Db;
  transport: Transport;
  now: Date;
  /** External broker: seconds until an unacked message is published again; null: never by time. */
  redeliverAfterS: number | null;
  log: GatewayLogger;
}

/** One transaction: lock a batch, publish it, mark it. published -1: nothing was published;
 * more: due rows were left (held by another dispatcher, or past this batch). */
export function dispatchBatch(c: DispatchContext, batchSize: number): Promise<{ published: number; more: boolean }> {
  return c.db.tx(async (q) => {
    const rows = await pickUnpublished(q, c.now, batchSize);
    const more = (rows[0]?.window_size ?? 0) > rows.length;
    if (rows.length === 0) return { published: -1, more };
    const { ok, failed, error } = await publishAll(c.transport, rows);
    await markPublished(q, ok, c.now, c.redeliverAfterS);
    await markFailed(q, failed, c.now, error);
    if (failed.length > 0) c.log.warn({ failed: failed.length, error }, 'device messages not published; will retry');
    // A batch that published nothing ends this drain: its rows wait for their retry time.
    return { published: ok.length === 0 ? -1 : ok.length, more };
  });
}

/** Publishes again, in order, what the topic's device has not acked; onlyIfDue: only when a
 * redelivery has fallen due (external broker sweep), else now (the device just subscribed). */
export async function redeliverTopic(c: DispatchContext, topic: string, onlyIfDue: boolean): Promise<number> {
  const sent = await c.db.tx(async (q) => {
    if (onlyIfDue) {
      if (!(await lockTopic(q, topic, false)) || !(await hasDueRedelivery(q, topic, c.now))) return 0;
      await forgetSuperseded(q, topic);
    } else {
      await lockTopic(q, topic, true);
    }
    const ids = await unackedOfTopic(q, topic, REDELIVERY_MAX, c.now);
    for (let i = 0; i < ids.length; i += REDELIVERY_CHUNK) {
      const rows = await messagesByIds(q, ids.slice(i, i + REDELIVERY_CHUNK));
      const { ok, failed, error } = await publishAll(c.transport, rows);
      // A gap would break the order: stop at the first failure, the rest waits for the next time.
      if (failed.length > 0) throw new Error(`redelivery to ${topic} failed: ${error}`);
      await markPublished(q, ok, c.now, c.redeliverAfterS);
    }
    return ids.length;
  });
  if (sent > 0) c.log.info({ topic, messages: sent }, 'redelivered unacknowledged device messages');
  return sent;
}
