// An edge device's play queue (contract section 12): duplicates and replays, the bound of unplayed
// messages, expiry. The queue is the edge device's rows of the device outbox, which the outbox
// (devices/outbox.ts) alone writes; every decision here runs under the per-topic lock the
// dispatcher takes too, so counting, dropping and publishing one edge device's messages never
// interleave.
import type { Tx } from '../db/db.ts';
import { lockDeviceQueue } from '../devices/outbox.ts';
import { edgePlayTopic } from '../devices/wire.ts';
import { insertEventsReturningFrom } from '../events/log.ts';

/** The same text for the same edge device within this many seconds is one announcement. */
export const DUPLICATE_WINDOW_SECONDS = 10;

export async function lockEdgeQueue(q: Tx, edgeId: string): Promise<void> {
  await lockDeviceQueue(q, edgePlayTopic(edgeId));
}

/** The message_id of the same text played on the edge device within the window, or of the same R2 MessageSid ever. */
export async function findDuplicate(
  q: Pick<Tx, 'query'>,
  edgeId: string,
  text: string,
  messageSid: string | null,
  now: Date,
): Promise<{ messageId: string; reason: 'replay' | 'duplicate' } | null> {
  const [row] = await q.query<{ message_id: string; reason: 'replay' | 'duplicate' }>(
    `(SELECT message_id, 'replay' AS reason FROM radio_messages WHERE $3::text IS NOT NULL AND edge_id = $1 AND message_sid = $3 LIMIT 1)
     UNION ALL
     (SELECT message_id, 'duplicate' FROM radio_messages
      WHERE edge_id = $1 AND md5(text) = md5($2) AND text = $2
        AND created_at > $4::timestamptz - make_interval(secs => ${DUPLICATE_WINDOW_SECONDS}) AND created_at <= $4::timestamptz
      ORDER BY created_at LIMIT 1)
     LIMIT 1`,
    [edgeId, text, messageSid, now],
  );
  return row === undefined ? null : { messageId: row.message_id, reason: row.reason };
}

/** Events of plays (type radio): one per message_id, with the edge's location. */
export async function insertRadioEvents(q: Tx, status: string, messageIds: readonly string[], now: Date, extra: Record<string, unknown> = {}): Promise<void> {
  if (messageIds.length === 0) return;
  const rows = await q.query(
    insertEventsReturningFrom(
      `SELECT 'radio', $1::text, m.organization_id, e.location_id, m.message_id,
         jsonb_build_object('edge_id', m.edge_id, 'text', m.spoken_text, 'message_id', m.message_id, 'priority', m.priority) || $4::jsonb,
         format('%s on %s: %s', initcap(replace($1::text, '_', ' ')), e.name, m.spoken_text), $3::timestamptz
       FROM radio_messages m JOIN radio_edges e ON e.edge_id = m.edge_id
       WHERE m.message_id = ANY ($2::text[])
       ORDER BY m.id`,
    ),
    [status, messageIds, now, JSON.stringify(extra)],
  );
  if (rows.length > 0) q.signal('events');
}
