// SQL of the device outbox as the dispatcher reads and marks it (device credentials: credentials.ts).
import type { Queryable } from '../db/db.ts';

/** Namespace of the per-topic advisory locks that keep one device's messages in order. */
export const TOPIC_LOCK = 727_003;

/**
 * Radio (contract section 12): a play message past its expires_at, or given up by the radio
 * (discarded: expired, or dropped beyond the edge device's queue bound), is never published, first
 * or again. Other messages have neither and are unaffected. `$now` is the query's time parameter.
 */
const live = (alias: string, now: string) => `${alias}discarded_at IS NULL AND (${alias}expires_at IS NULL OR ${alias}expires_at > ${now})`;

export interface OutboxMessage {
  id: number;
  topic: string;
  payload: Record<string, unknown>;
  message_key: string;
  /** The attachment stored apart (a play's WAV: the device_attachments view, migration 027),
   * published as the payload's `audio`; null for any other message, and for plays queued when the
   * payload held the audio itself. */
  audio: Buffer | null;
}

/**
 * Locks and returns up to `limit` messages due for their first publish, oldest first. A row locked
 * by another dispatcher is skipped, and so is every message of a topic another dispatcher holds:
 * one device's messages are published by one dispatcher at a time, in order.
 */
export async function pickUnpublished(q: Queryable, now: Date, limit: number): Promise<(OutboxMessage & { window_size: number })[]> {
  // Three steps in one statement, so the topic locks are tried only for a bounded window of the
  // oldest messages whatever plan the first step gets: the window (read, not locked); the topics
  // of the window this transaction can lock; the window's rows of those topics, row-locked.
  // window_size: how many due rows the window saw; more than were locked means some wait (held by
  // another dispatcher, or past this batch).
  return q.query<OutboxMessage & { window_size: number }>(
    `WITH window_rows AS (
       SELECT id, topic FROM device_outbox
       WHERE published_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= $1) AND ${live('', '$1')}
       ORDER BY id LIMIT $2 * 4
     ), our_topics AS (
       SELECT topic FROM (SELECT DISTINCT topic FROM window_rows) t
       WHERE pg_try_advisory_xact_lock(${TOPIC_LOCK}, hashtext(topic))
     )
     SELECT d.id, d.topic, d.payload, d.message_key, a.bytes AS audio, (SELECT count(*) FROM window_rows)::int AS window_size
     FROM device_outbox d LEFT JOIN device_attachments a ON a.ref = d.audio_message_id
     WHERE d.id IN (SELECT id FROM window_rows) AND d.topic IN (SELECT topic FROM our_topics) AND d.published_at IS NULL
     ORDER BY d.priority DESC, d.id LIMIT $2
     FOR UPDATE OF d SKIP LOCKED`,
    [now, limit],
  );
}

/** Is anything due for a first publish? One cheap read, so an idle poll opens no transaction. */
export async function hasUnpublished(q: Queryable, now: Date): Promise<boolean> {
  const rows = await q.query(
    `SELECT 1 FROM device_outbox WHERE published_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= $1) AND ${live('', '$1')} LIMIT 1`,
    [now],
  );
  return rows.length > 0;
}

/**
 * Marks messages published. `redeliverAfterS`: seconds until a redelivery if no ack comes (it grows
 * with each publish, up to 30 minutes, and stops a day after the message was queued); null: none.
 */
export async function markPublished(q: Queryable, ids: readonly number[], now: Date, redeliverAfterS: number | null): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE device_outbox SET published_at = COALESCE(published_at, $2), publish_attempts = publish_attempts + 1, last_error = NULL,
       next_attempt_at = CASE
         WHEN $3::integer IS NULL OR acked_at IS NOT NULL OR created_at < $2::timestamptz - interval '1 day' THEN NULL
         ELSE $2::timestamptz + LEAST(1800, $3::integer * 2 ^ LEAST(publish_attempts, 16)) * interval '1 second'
       END
     WHERE id = ANY($1::bigint[])`,
    [ids, now, redeliverAfterS],
  );
}

/** A publish failed: try again later (1 s, doubling, at most 5 minutes). */
export async function markFailed(q: Queryable, ids: readonly number[], now: Date, error: string): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE device_outbox SET publish_attempts = publish_attempts + 1, last_error = $3,
       next_attempt_at = $2::timestamptz + LEAST(300, 2 ^ LEAST(publish_attempts, 16)) * interval '1 second'
     WHERE id = ANY($1::bigint[])`,
    [ids, now, error.slice(0, 500)],
  );
}

/** Waits for (wait: true) or tries (false) the topic's ordering lock for the rest of the transaction. */
export async function lockTopic(q: Queryable, topic: string, wait: boolean): Promise<boolean> {
  if (wait) {
    await q.query(`SELECT pg_advisory_xact_lock(${TOPIC_LOCK}, hashtext($1))`, [topic]);
    return true;
  }
  const [row] = await q.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(${TOPIC_LOCK}, hashtext($1)) AS locked`, [topic]);
  return row?.locked === true;
}

/**
 * Ids of the topic's published messages that wait for an ack, oldest first. Messages older than the
 * newest acked one are left out: the device acked a later message, so it had these before it
 * (QoS 1 keeps one subscription in order), and sending an old command again would undo a newer one.
 */
export async function unackedOfTopic(q: Queryable, topic: string, limit: number, now: Date): Promise<number[]> {
  // Play messages (they have an expires_at) are not superseded by a later ack: urgent ones go
  // first (priority), so a later message may be acked before an earlier one; their expiry bounds them.
  const rows = await q.query<{ id: number }>(
    `SELECT id FROM device_outbox
     WHERE topic = $1 AND published_at IS NOT NULL AND acked_at IS NULL AND ${live('', '$3')}
       AND (expires_at IS NOT NULL OR id > COALESCE((SELECT max(id) FROM device_outbox WHERE topic = $1 AND acked_at IS NOT NULL), 0))
     ORDER BY priority DESC, id LIMIT $2`,
    [topic, limit, now],
  );
  return rows.map((r) => r.id);
}

/**
 * The same, for many topics in one statement (devices that subscribed together): per topic, the
 * ids waiting for an ack in the order they go out, with the size of each (for the byte budget).
 */
export async function unackedOfTopics(
  q: Queryable,
  topics: readonly string[],
  limit: number,
  now: Date,
): Promise<Map<string, { id: number; bytes: number }[]>> {
  const rows = await q.query<{ topic: string; id: number; bytes: number }>(
    `SELECT topic, id, bytes FROM (
       SELECT d.topic, d.id, octet_length(d.payload::text) + coalesce(octet_length(a.bytes) * 4 / 3, 0) AS bytes,
         row_number() OVER (PARTITION BY d.topic ORDER BY d.priority DESC, d.id) AS n
       FROM device_outbox d LEFT JOIN device_attachments a ON a.ref = d.audio_message_id
       WHERE d.topic = ANY($1::text[]) AND d.published_at IS NOT NULL AND d.acked_at IS NULL AND ${live('d.', '$3')}
         AND (d.expires_at IS NOT NULL OR d.id > COALESCE((SELECT max(x.id) FROM device_outbox x WHERE x.topic = d.topic AND x.acked_at IS NOT NULL), 0))
     ) t WHERE n <= $2 ORDER BY topic, n`,
    [topics, limit, now],
  );
  const byTopic = new Map<string, { id: number; bytes: number }[]>();
  for (const r of rows) {
    const list = byTopic.get(r.topic) ?? [];
    list.push({ id: Number(r.id), bytes: Number(r.bytes) });
    byTopic.set(r.topic, list);
  }
  return byTopic;
}

/** Superseded messages (older than an acked one) are never redelivered. Play messages (those with
 * an expiry) are never superseded: an urgent one is acked before normal ones queued earlier. */
export async function forgetSuperseded(q: Queryable, topic: string): Promise<void> {
  await q.query(
    `UPDATE device_outbox SET next_attempt_at = NULL
     WHERE topic = $1 AND published_at IS NOT NULL AND acked_at IS NULL AND next_attempt_at IS NOT NULL AND expires_at IS NULL
       AND id < (SELECT max(id) FROM device_outbox WHERE topic = $1 AND acked_at IS NOT NULL)`,
    [topic],
  );
}

export async function messagesByIds(q: Queryable, ids: readonly number[]): Promise<OutboxMessage[]> {
  return q.query<OutboxMessage>(
    `SELECT d.id, d.topic, d.payload, d.message_key, a.bytes AS audio
     FROM device_outbox d LEFT JOIN device_attachments a ON a.ref = d.audio_message_id
     WHERE d.id = ANY($1::bigint[]) ORDER BY d.priority DESC, d.id`,
    [ids],
  );
}

/** Topics with a redelivery due (external broker: nobody tells us when a device comes back). */
export async function topicsDueForRedelivery(q: Queryable, now: Date, limit: number): Promise<string[]> {
  const rows = await q.query<{ topic: string }>(
    `SELECT DISTINCT topic FROM device_outbox
     WHERE published_at IS NOT NULL AND acked_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1 AND ${live('', '$1')}
     LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => r.topic);
}

export async function hasDueRedelivery(q: Queryable, topic: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    `SELECT 1 FROM device_outbox
     WHERE topic = $1 AND published_at IS NOT NULL AND acked_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= $2 AND ${live('', '$2')}
     LIMIT 1`,
    [topic, now],
  );
  return rows.length > 0;
}

export interface AckRecord {
  /** The outbox topic the acked message was sent on (lockers/<id>/commands, radio/<edge>/play). */
  topic: string;
  key: string;
  body: Record<string, unknown>;
}

/** A message acked for the first time, as the features that act on acks see it. */
export interface AckedMessage {
  /** The outbox topic it was sent on. */
  topic: string;
  /** Its message_key (command_id / message_id). */
  key: string;
}

/** Records acks; an ack counts only for a message sent to the same device, and only its first ack.
 * Returns the messages acked now. */
export async function recordAcks(q: Queryable, acks: readonly AckRecord[], now: Date): Promise<AckedMessage[]> {
  if (acks.length === 0) return [];
  return q.query<AckedMessage>(
    `UPDATE device_outbox d SET acked_at = $1, ack = a.body::jsonb, next_attempt_at = NULL
     FROM unnest($2::text[], $3::text[], $4::text[]) AS a(message_key, topic, body)
     WHERE d.message_key = a.message_key AND d.topic = a.topic AND d.acked_at IS NULL
     RETURNING d.topic, d.message_key AS key`,
    [now, acks.map((a) => a.key), acks.map((a) => a.topic), acks.map((a) => JSON.stringify(a.body))],
  );
}
