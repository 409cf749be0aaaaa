// The transcripts an edge device with the "transcript" voice handler keeps: listed newest first, and
// the audio of each (the WAV that was played, stored once). Same callers as R1.
import type { Queryable } from '../db/db.ts';
import { AppError, invalid } from '../http/errors.ts';
import { edgeForActor } from './access.ts';
import type { Actor } from '../access/actor.ts';
import { listTranscripts, transcriptAudio, type TranscriptRow } from './store.ts';
import { listTimeline, messageAudio, type TimelineCursor, type TimelineRow } from './transcript-store.ts';
import type { Clock } from '../clock.ts';

/** A retired (disabled) edge device's transcripts stay readable: history is kept (section 18). */
const RETIRED = { retired: true };

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
  actor: Actor,
  edgeId: string,
  page: { limit: number; before?: string | undefined },
): Promise<TranscriptPage> {
  const edge = await edgeForActor(deps.db, actor, edgeId, undefined, RETIRED);
  const rows = await listTranscripts(deps.db, edge.edgeId, page.limit, page.before ?? null);
  if (rows === null) throw invalid('before', "is not a message_id of this edge device's transcripts");
  return { transcripts: rows, nextBefore: rows.length === page.limit ? (rows.at(-1)?.message_id ?? null) : null };
}

/** The WAV of one of the edge device's transcripts. */
export async function transcriptWav(deps: TranscriptDeps, actor: Actor, edgeId: string, messageId: string): Promise<Buffer> {
  const edge = await edgeForActor(deps.db, actor, edgeId, undefined, RETIRED);
  const wav = await transcriptAudio(deps.db, edge.edgeId, messageId);
  if (wav === null) throw new AppError(404, 'not_found', 'transcript not found');
  return wav;
}

// R3 (contract section 12): what an edge device played and heard.

export interface TimelinePage {
  entries: TimelineRow[];
  /** The `cursor` of the next page; null on the last one. */
  nextCursor: string | null;
}

const encodeCursor = (c: TimelineCursor) => Buffer.from(JSON.stringify([c.at, c.k, c.id])).toString('base64url');

function decodeCursor(raw: string): TimelineCursor {
  try {
    const [at, k, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && Number.isFinite(Date.parse(at)) && (k === 0 || k === 1) && Number.isSafeInteger(id)) return { at, k, id: id as number };
  } catch {
    // falls through
  }
  throw invalid('cursor', 'is not a cursor this listing gave');
}

function instant(name: string, raw: string | undefined): Date | null {
  if (raw === undefined) return null;
  const at = new Date(raw);
  if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(at.getTime())) throw invalid(name, 'is not a date-time (e.g. 2026-01-15T09:00:00Z)');
  return at;
}

/** R3: a page of the edge device's time line, newest first, within from/to. */
export async function radioTimeline(
  deps: TranscriptDeps & { clock: Clock },
  actor: Actor,
  query: { edge_id: string; from?: string | undefined; to?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<TimelinePage> {
  const from = instant('from', query.from);
  const to = instant('to', query.to);
  if (from !== null && to !== null && from > to) throw invalid('from', 'is after to');
  const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
  // Another organization's edge device is answered as one that does not exist (contract section 2).
  const edge = await edgeForActor(deps.db, actor, query.edge_id, () => new AppError(404, 'not_found', 'edge device not found'), RETIRED);
  const rows = await listTimeline(deps.db, edge.edgeId, { from, to }, query.limit + 1, cursor, deps.clock.now());
  const entries = rows.slice(0, query.limit);
  const last = entries.at(-1);
  return { entries, nextCursor: rows.length > query.limit && last !== undefined ? encodeCursor({ at: last.at, k: last.k, id: last.row_id }) : null };
}

/** The WAV of a played message (R3's audio_url), to the callers of its edge device. A token of
 * another organization is answered as for a message that does not exist, as R3 is; another edge
 * device's key is 403, as everywhere. */
export async function playedWav(deps: TranscriptDeps, actor: Actor, messageId: string): Promise<Buffer> {
  const noAudio = () => new AppError(404, 'not_found', 'no audio for this message_id');
  const found = await messageAudio(deps.db, messageId);
  if (found === null) throw noAudio();
  await edgeForActor(deps.db, actor, found.edgeId, noAudio, RETIRED);
  return found.wav;
}
