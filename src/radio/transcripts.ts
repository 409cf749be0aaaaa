// The transcripts an edge device with the "transcript" voice handler keeps: listed newest first, and
// the audio of each (the WAV that was played, stored once). Same callers as R1.
import type { Queryable } from '../db/db.ts';
import { AppError, invalid } from '../http/errors.ts';
import { edgeForCaller } from './access.ts';
import type { RadioCaller } from './rules.ts';
import { listTranscripts, transcriptAudio, type TranscriptRow } from './store.ts';

export interface TranscriptDeps {
  db: Queryable;
}

export interface TranscriptPage {
  transcripts: TranscriptRow[];
  /** The `before` of the next page; null on the last one. */
  nextBefore: string | null;
}

/** A page of the edge device's transcripts; `before` is the last message_id of the previous page. */
export async function transcriptPage(
  deps: TranscriptDeps,
  caller: RadioCaller,
  edgeId: string,
  page: { limit: number; before?: string | undefined },
): Promise<TranscriptPage> {
  const edge = await edgeForCaller(deps.db, caller, edgeId);
  const rows = await listTranscripts(deps.db, edge.edgeId, page.limit, page.before ?? null);
  if (rows === null) throw invalid('before', 'is not a message_id of this edge device\'s transcripts');
  return { transcripts: rows, nextBefore: rows.length === page.limit ? (rows.at(-1)?.message_id ?? null) : null };
}

/** The WAV of one of the edge device's transcripts. */
export async function transcriptWav(deps: TranscriptDeps, caller: RadioCaller, edgeId: string, messageId: string): Promise<Buffer> {
  const edge = await edgeForCaller(deps.db, caller, edgeId);
  const wav = await transcriptAudio(deps.db, edge.edgeId, messageId);
  if (wav === null) throw new AppError(404, 'not_found', 'transcript not found');
  return wav;
}
