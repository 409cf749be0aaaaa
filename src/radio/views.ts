// The radio's wire formats: what R1 and R2 answer, and a transcript as the listing shows it.
import type { Static } from 'typebox';
import type { Played, Timeline, TimelineEntry, Transcript, TranscriptList } from './schemas.ts';
import type { TranscriptRow } from './store.ts';
import type { TimelinePage, TranscriptPage } from './transcripts.ts';
import type { TimelineRow } from './transcript-store.ts';

export const playedView = (messageId: string): Static<typeof Played> => ({ success: true, message_id: messageId });

/** Where the WAV of a transcript is served (same credentials as the listing). */
export const transcriptAudioPath = (edgeId: string, messageId: string) =>
  `/api/radio/edges/${encodeURIComponent(edgeId)}/transcripts/${encodeURIComponent(messageId)}/audio`;

export function transcriptView(r: TranscriptRow): Static<typeof Transcript> {
  return {
    message_id: r.message_id,
    edge_id: r.edge_id,
    source: r.source,
    actor: r.actor,
    text: r.text,
    spoken_text: r.spoken_text,
    handlers: r.handlers,
    from: r.from_number,
    to: r.to_number,
    account_sid: r.account_sid,
    mime: 'audio/wav',
    audio_bytes: r.audio_bytes,
    duration_ms: r.duration_ms,
    created_at: r.created_at,
    audio_url: transcriptAudioPath(r.edge_id, r.message_id),
  };
}

export function transcriptListView(page: TranscriptPage): Static<typeof TranscriptList> {
  return { transcripts: page.transcripts.map(transcriptView), next_before: page.nextBefore };
}

/** Where the WAV of a played message is served (R3's credentials). */
export const messageAudioPath = (messageId: string) => `/api/radio/messages/${encodeURIComponent(messageId)}/audio`;

export function timelineEntryView(r: TimelineRow): Static<typeof TimelineEntry> {
  return {
    kind: r.kind,
    id: r.id,
    edge_id: r.edge_id,
    at: r.at,
    text: r.text,
    spoken_text: r.spoken_text,
    source: r.source as Static<typeof TimelineEntry>['source'],
    actor: r.actor,
    priority: r.priority as Static<typeof TimelineEntry>['priority'],
    expires_at: r.expires_at,
    status: r.status,
    duration_ms: r.duration_ms,
    audio_url: r.kind === 'played' && r.has_audio ? messageAudioPath(r.id) : null,
    speaker: r.speaker,
    heard_at: r.heard_at,
    intent: r.intent as Static<typeof TimelineEntry>['intent'],
    cfh_request_id: r.cfh_request_id,
    reply_message_id: r.reply_message_id,
  };
}

export const timelineView = (page: TimelinePage): Static<typeof Timeline> => ({
  transcripts: page.entries.map(timelineEntryView),
  next_cursor: page.nextCursor,
});
