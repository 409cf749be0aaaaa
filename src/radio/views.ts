// The radio's wire formats: what R1 and R2 answer, and a transcript as the listing shows it.
import type { Static } from 'typebox';
import type { Played, Transcript, TranscriptList } from './schemas.ts';
import type { TranscriptRow } from './store.ts';
import type { TranscriptPage } from './transcripts.ts';

export const playedView = (messageId: string): Static<typeof Played> => ({ success: true, message_id: messageId });

/** Where the WAV of a transcript is served (same credentials as the listing). */
export const transcriptAudioPath = (edgeId: string, messageId: string) =>
  `/api/radio/edges/${encodeURIComponent(edgeId)}/transcripts/${encodeURIComponent(messageId)}/audio`;

export function transcriptView(r: TranscriptRow): Static<typeof Transcript> {
  return {
    message_id: r.message_id, edge_id: r.edge_id, source: r.source, actor: r.actor, text: r.text, spoken_text: r.spoken_text,
    handlers: r.handlers, from: r.from_number, to: r.to_number, account_sid: r.account_sid, mime: 'audio/wav',
    audio_bytes: r.audio_bytes, duration_ms: r.duration_ms, created_at: r.created_at,
    audio_url: transcriptAudioPath(r.edge_id, r.message_id),
  };
}

export function transcriptListView(page: TranscriptPage): Static<typeof TranscriptList> {
  return { transcripts: page.transcripts.map(transcriptView), next_before: page.nextBefore };
}
