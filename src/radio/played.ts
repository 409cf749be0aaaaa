// An edge device acked a play message: the announcement was played. Its "played" event (contract
// section 11) is written in the transaction that records the ack, once per message (only a first
// ack reaches here). compose() registers this with the device gateway.
import type { Tx } from '../db/db.ts';
import type { AckedMessage } from '../devices/acks.ts';
import { insertPlayedEvents } from './store.ts';

/** The gateway's name for this handler (registering it again replaces it). */
export const RADIO_PLAYED_ACKS = 'radio.played';

export async function recordPlayed(q: Tx, acked: readonly AckedMessage[], now: Date): Promise<void> {
  await insertPlayedEvents(
    q,
    acked.map((a) => a.key),
    now,
  );
}
