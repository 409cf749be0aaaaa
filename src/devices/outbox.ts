// The transactional outbox: a message for a device is stored in the same transaction as the change
// that causes it, and published to the broker by the dispatcher, which that commit wakes.
import type { Tx } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';

export interface DeviceMessage {
  /** MQTT topic, e.g. lockers/100/commands or radio/store10-radio/play. */
  topic: string;
  payload: Record<string, unknown>;
  /** Unique id of this message (command_id / message_id): a repeated key is stored once. */
  key: string;
  /** A play's audio: the message_id of its radio_audio row, which the dispatcher puts in the
   * payload as `audio` when it publishes (the WAV is stored once, not in every row that sends it). */
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
