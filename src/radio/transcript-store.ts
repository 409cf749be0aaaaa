// SQL of R3: what an edge device played and heard, one time line, newest first, in keyset pages.
import type { Queryable } from '../db/db.ts';

export interface TimelineRow {
  kind: 'played' | 'heard';
  /** Played: the message_id; heard: the heard_id. */
  id: string;
  edge_id: string;
  at: string;
  text: string;
  /** played */
  spoken_text: string | null;
  source: string | null;
  actor: string | null;
  priority: string | null;
  expires_at: string | null;
  /** played: queued, played, expired, dropped; heard: the outcome of the voice action. */
  status: string;
  duration_ms: number | null;
  has_audio: boolean;
  /** heard */
  speaker: string | null;
  heard_at: string | null;
  intent: string | null;
  cfh_request_id: number | null;
  reply_message_id: string | null;
  /** The key of the row in the time line (the cursor is the last row's). */
  k: number;
  row_id: number;
}

export interface TimelineCursor {
  at: string;
  k: number;
  id: number;
}

/** Newest first within [from, to], after the cursor; `limit` rows. */
export async function listTimeline(
  q: Queryable,
  edgeId: string,
  range: { from: Date | null; to: Date | null },
  limit: number,
  cursor: TimelineCursor | null,
  now: Date,
): Promise<TimelineRow[]> {
  return q.query<TimelineRow>(
    `SELECT * FROM (
       SELECT 'played' AS kind, m.message_id AS id, m.edge_id, m.created_at AS at, m.text, m.spoken_text, m.source, m.actor, m.priority,
         m.expires_at,
         CASE WHEN d.acked_at IS NOT NULL THEN 'played' WHEN d.discard_reason IS NOT NULL THEN d.discard_reason
              WHEN d.expires_at IS NOT NULL AND d.expires_at <= $8 THEN 'expired'
              WHEN d.id IS NULL AND m.expires_at IS NOT NULL AND m.expires_at <= $8 THEN 'expired' ELSE 'queued' END AS status,
         m.duration_ms, EXISTS (SELECT 1 FROM radio_audio a WHERE a.message_id = m.message_id) AS has_audio,
         NULL::text AS speaker, NULL::timestamptz AS heard_at, NULL::text AS intent, m.cfh_request_id, NULL::text AS reply_message_id,
         0 AS k, m.id AS row_id
       FROM radio_messages m LEFT JOIN device_outbox d ON d.message_key = m.message_id
       WHERE m.edge_id = $1 AND ($2::timestamptz IS NULL OR m.created_at >= $2) AND ($3::timestamptz IS NULL OR m.created_at <= $3)
       UNION ALL
       SELECT 'heard', h.heard_id, h.edge_id, h.received_at, h.text, NULL, NULL, NULL, NULL, NULL, h.outcome, NULL, false,
         h.speaker, h.heard_at, h.intent, h.cfh_request_id, h.reply_message_id, 1, h.id
       FROM radio_heard h
       WHERE h.edge_id = $1 AND ($2::timestamptz IS NULL OR h.received_at >= $2) AND ($3::timestamptz IS NULL OR h.received_at <= $3)
     ) t
     WHERE $4::timestamptz IS NULL OR (t.at, t.k, t.row_id) < ($4::timestamptz, $5::int, $6::bigint)
     ORDER BY t.at DESC, t.k DESC, t.row_id DESC
     LIMIT $7`,
    [edgeId, range.from, range.to, cursor?.at ?? null, cursor?.k ?? 0, cursor?.id ?? 0, limit, now],
  );
}

/** The WAV of a played message and its edge device (null: no such message, or its audio is gone). */
export async function messageAudio(q: Queryable, messageId: string): Promise<{ edgeId: string; wav: Buffer } | null> {
  const [row] = await q.query<{ edge_id: string; wav: Buffer }>(
    'SELECT m.edge_id, a.wav FROM radio_messages m JOIN radio_audio a ON a.message_id = m.message_id WHERE m.message_id = $1',
    [messageId],
  );
  return row === undefined ? null : { edgeId: row.edge_id, wav: row.wav };
}
