// The transactional outbox: a message for a device is stored in the same transaction as the change
// that causes it, and published to the broker by the dispatcher, which that commit wakes. This is
// the one writer of device_outbox besides the dispatcher's marks (store.ts): a feature that gives
// up a message it queued (the radio's expired and dropped plays), and retention, do it through
// these functions.
import type { Queryable, Tx } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';
import { TOPIC_LOCK } from './store.ts';

export interface DeviceMessage {
  /** MQTT topic, e.g. lockers/100/commands or radio/store10-radio/play. */
  topic: string;
  payload: Record<string, unknown>;
  /** Unique id of this message (command_id / message_id): a repeated key is stored once. */
  key: string;
  /** An attachment's reference (a play's audio: its message_id), which the dispatcher looks up in
   * device_attachments and puts in the payload as `audio` when it publishes (stored once, by the
   * feature that keeps it, not in every row that sends it). */
  audioMessageId?: string;
  /** A play's expiry: never published after it (contract section 12). */
  expiresAt?: Date;
  /** Published before lower ones of the same device when both wait (radio: 1 urgent, 0 normal). */
  priority?: number;
}

export async function enqueueDeviceMessage(q: Tx, message: DeviceMessage, createdAt: Date): Promise<void> {
  q.signal('device_outbox');
  await q.query(
    `INSERT INTO device_outbox (topic, payload, message_key, created_at, audio_message_id, expires_at, priority) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (message_key) DO NOTHING`,
    [message.topic, message.payload, message.key, createdAt, message.audioMessageId ?? null, message.expiresAt ?? null, message.priority ?? 0],
  );
}

/**
 * The device messages of a change, for its statement (a CTE): `rows` is a SELECT of topic, payload
 * (jsonb), message_key, created_at. A key stored already is not sent again. The fragment wakes
 * the dispatcher when the statement holding it commits.
 */
export const queueDeviceMessages = (rows: Sql): Sql =>
  sql`INSERT INTO device_outbox (topic, payload, message_key, created_at) ${rows} ON CONFLICT (message_key) DO NOTHING`.wakes('device_outbox');

/**
 * Holds the device's queue (its topic's ordering lock, the one the dispatcher takes) to the end of
 * the transaction: what is counted, discarded or queued under it never interleaves with publishing.
 */
export async function lockDeviceQueue(q: Tx, topic: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(${TOPIC_LOCK}, hashtext($1))`, [topic]);
}

/**
 * Beyond `limit` messages on the topic not acked, not discarded and not expired, the oldest of the
 * lowest priority are discarded ('dropped': never published, first or again). Returns their keys.
 */
export async function discardBeyondLimit(q: Tx, topic: string, limit: number, now: Date): Promise<string[]> {
  const rows = await q.query<{ message_key: string }>(
    `WITH unplayed AS (
       SELECT id, priority FROM device_outbox
       WHERE topic = $1 AND acked_at IS NULL AND discarded_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
     ), victims AS (
       SELECT id FROM unplayed ORDER BY priority, id
       LIMIT GREATEST(0, (SELECT count(*) FROM unplayed) - $2)
     )
     UPDATE device_outbox SET discarded_at = $3, discard_reason = 'dropped', next_attempt_at = NULL
     WHERE id IN (SELECT id FROM victims)
     RETURNING message_key`,
    [topic, limit, now],
  );
  return rows.map((r) => r.message_key);
}

/** Discards ('expired') a message with an expiry that is past it and was never acked. True when it
 * did: it was still waiting (a message acked or discarded before is left as it is). */
export async function discardExpired(q: Tx, key: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    `UPDATE device_outbox SET discarded_at = $2, discard_reason = 'expired', next_attempt_at = NULL
     WHERE message_key = $1 AND acked_at IS NULL AND discarded_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $2
     RETURNING 1`,
    [key, now],
  );
  return rows.length > 0;
}

/**
 * Retention: one batch of the messages queued before the cutoff, delivered or not, among the
 * oldest (the primary key's head); how many went. Not only the acked ones: redelivery skips a
 * message older than a later acked one, so deleting that acked one alone would make a months-old
 * command due to be sent again. Rows another instance is deleting are skipped.
 */
export async function deleteMessagesQueuedBefore(q: Queryable, cutoff: Date, limit: number): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    `WITH d AS (
       DELETE FROM device_outbox WHERE id IN (
         SELECT id FROM (SELECT id, created_at FROM device_outbox ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS o
         WHERE o.created_at < $1)
       RETURNING 1
     ) SELECT count(*)::int AS n FROM d`,
    [cutoff, limit],
  );
  return row?.n ?? 0;
}
