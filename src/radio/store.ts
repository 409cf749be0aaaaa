// SQL of the radio: edge devices and messaging accounts (provisioned), played messages, their audio
// (stored once, read by the transcripts and by the device dispatcher), transcripts. An edge device
// found by its key: devices/credentials.ts.
import type { Queryable, Tx } from '../db/db.ts';
import type { EdgeIdentity } from '../devices/credentials.ts';
import { insertEventsReturningFrom } from '../events/log.ts';

export type VoiceHandler = 'normalize' | 'chime' | 'transcript';

/** generic: R1; messaging: R2; announcement: of a CFH request; confirmation: of a voice action. */
export type PlaySource = 'generic' | 'messaging' | 'announcement' | 'confirmation';

/** An edge device: the same whether found by its id or by its key. */
export type Edge = EdgeIdentity;

/** An enabled edge device (a retired one plays nothing); `retired`: a disabled one too (its transcripts stay readable). */
export async function findEdge(q: Queryable, edgeId: string, opts: { retired?: boolean } = {}): Promise<Edge | null> {
  const [row] = await q.query<{ edge_id: string; organization_id: number; location_id: number; voice_handlers: string[] }>(
    'SELECT edge_id, organization_id, location_id, voice_handlers FROM radio_edges WHERE edge_id = $1 AND (enabled OR $2)',
    [edgeId, opts.retired === true],
  );
  return row === undefined
    ? null
    : { edgeId: row.edge_id, organizationId: row.organization_id, locationId: row.location_id, voiceHandlers: row.voice_handlers };
}

export interface MessagingAccount {
  accountSid: string;
  organizationId: number;
  authToken: string;
}

export async function findMessagingAccount(q: Queryable, accountSid: string): Promise<MessagingAccount | null> {
  const [row] = await q.query<{ account_sid: string; organization_id: number; auth_token: string }>(
    'SELECT account_sid, organization_id, auth_token FROM messaging_accounts WHERE account_sid = $1 AND enabled',
    [accountSid],
  );
  return row === undefined ? null : { accountSid: row.account_sid, organizationId: row.organization_id, authToken: row.auth_token };
}

export type Credential = 'edge_key' | 'token' | 'messaging_signature' | 'service';

export interface PlayRecord {
  messageId: string;
  edge: Edge;
  source: PlaySource;
  actor: string;
  text: string;
  spokenText: string;
  processed: boolean;
  handlers: VoiceHandler[];
  credential: Credential;
  apiTokenId: number | null;
  messaging: { accountSid: string; from: string; to: string } | null;
  wav: Buffer;
  durationMs: number;
  /** The "transcript" voice handler ran: the message is listed in the edge device's transcripts. */
  keepTranscript: boolean;
  createdAt: Date;
  priority: 'normal' | 'urgent';
  expiresAt: Date;
  /** R2: the provider's MessageSid. */
  messageSid: string | null;
  /** R2: only the first characters were spoken. */
  truncated: boolean;
  /** An announcement: of which CFH request and status. */
  cfh: { requestId: number; status: string } | null;
}

/** A played message, its audio (stored once) and its transcript if kept: one statement. */
export async function insertPlay(q: Queryable, m: PlayRecord): Promise<void> {
  await q.query(
    `WITH message AS (
       INSERT INTO radio_messages (message_id, edge_id, organization_id, source, actor, text, spoken_text, processed, handlers,
         credential, api_token_id, account_sid, from_number, to_number, audio_bytes, duration_ms, created_at,
         priority, expires_at, message_sid, truncated, cfh_request_id, cfh_status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $20, $21, $22, $23, $24, $25)
       RETURNING message_id, edge_id, created_at
     ), audio AS (
       INSERT INTO radio_audio (message_id, wav, created_at) SELECT message_id, $18, created_at FROM message
     )
     INSERT INTO radio_transcripts (message_id, edge_id, created_at) SELECT message_id, edge_id, created_at FROM message WHERE $19::boolean`,
    [
      m.messageId,
      m.edge.edgeId,
      m.edge.organizationId,
      m.source,
      m.actor,
      m.text,
      m.spokenText,
      m.processed,
      m.handlers,
      m.credential,
      m.apiTokenId,
      m.messaging?.accountSid ?? null,
      m.messaging?.from ?? null,
      m.messaging?.to ?? null,
      m.wav.length,
      m.durationMs,
      m.createdAt,
      m.wav,
      m.keepTranscript,
      m.priority,
      m.expiresAt,
      m.messageSid,
      m.truncated,
      m.cfh?.requestId ?? null,
      m.cfh?.status ?? null,
    ],
  );
}

export interface TranscriptRow {
  message_id: string;
  edge_id: string;
  source: 'generic' | 'messaging';
  actor: string;
  text: string;
  spoken_text: string;
  handlers: VoiceHandler[];
  account_sid: string | null;
  from_number: string | null;
  to_number: string | null;
  audio_bytes: number;
  duration_ms: number;
  created_at: string;
}

/**
 * The newest transcripts of an edge device first; with `before` (a message_id of this edge's
 * transcripts), those older than it. Null when `before` is not one of them.
 */
export async function listTranscripts(q: Queryable, edgeId: string, limit: number, before: string | null): Promise<TranscriptRow[] | null> {
  let cursor: { created_at: string; id: number } | undefined;
  if (before !== null) {
    [cursor] = await q.query<{ created_at: string; id: number }>('SELECT created_at, id FROM radio_transcripts WHERE edge_id = $1 AND message_id = $2', [
      edgeId,
      before,
    ]);
    if (cursor === undefined) return null;
  }
  return q.query<TranscriptRow>(
    `SELECT t.message_id, t.edge_id, m.source, m.actor, m.text, m.spoken_text, m.handlers, m.account_sid, m.from_number,
       m.to_number, m.audio_bytes, m.duration_ms, t.created_at
     FROM radio_transcripts t JOIN radio_messages m ON m.message_id = t.message_id
     WHERE t.edge_id = $1 AND ($2::timestamptz IS NULL OR (t.created_at, t.id) < ($2::timestamptz, $3::bigint))
     ORDER BY t.created_at DESC, t.id DESC
     LIMIT $4`,
    [edgeId, cursor?.created_at ?? null, cursor?.id ?? null, limit],
  );
}

/** The WAV of one of the edge device's transcripts. */
export async function transcriptAudio(q: Queryable, edgeId: string, messageId: string): Promise<Buffer | null> {
  const [row] = await q.query<{ wav: Buffer }>(
    `SELECT a.wav FROM radio_transcripts t JOIN radio_audio a ON a.message_id = t.message_id
     WHERE t.edge_id = $1 AND t.message_id = $2`,
    [edgeId, messageId],
  );
  return row?.wav ?? null;
}

/**
 * The "played" events of messages an edge device acked (contract section 11): one per message, in
 * the transaction that records the acks. Returns how many were written.
 */
export async function insertPlayedEvents(q: Tx, messageIds: readonly string[], now: Date): Promise<number> {
  const rows = await q.query(
    insertEventsReturningFrom(
      `SELECT 'radio', 'played', m.organization_id, e.location_id, m.message_id,
         jsonb_build_object('edge_id', m.edge_id, 'text', m.spoken_text, 'message_id', m.message_id),
         format('Played on %s: %s', e.name, m.spoken_text), $2::timestamptz
       FROM radio_messages m JOIN radio_edges e ON e.edge_id = m.edge_id
       WHERE m.message_id = ANY ($1::text[])
       ORDER BY m.id`,
    ),
    [messageIds, now],
  );
  if (rows.length > 0) q.signal('events');
  return rows.length;
}
