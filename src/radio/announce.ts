// Announcements of Call for Help on the radio (contract section 12), after the fact as every
// effect is: the event log's "radio-announcements" subscriber (jobs.ts) asks, for each request
// whose status changed, for one announcement job a few seconds later (a later status of the same
// request replaces it, so a quick succession says only the latest); the job, run once across
// instances, speaks the status on each edge device of the location that announces it, in the
// location's language, urgent for an escalation. Speech is slow and holds no lock: every edge's
// audio is made before any transaction opens, then the plays are queued in the job's transaction.
import type { Queryable, Tx } from '../db/db.ts';
import { announcementText, isUrgent, languageOf, type AnnouncedRequest } from './announce-rules.ts';
import { announcingEdges } from './announce-store.ts';
import { prepareAudio, queuePlay, type PlayDeps, type PlayRequest } from './play.ts';

/** Keeps radio_open_requests, what voice actions can claim (voice-store.ts followRequests). */
export const RADIO_REQUESTS_SUBSCRIBER = 'radio-requests';

export type AnnounceDeps = Pick<PlayDeps, 'speech' | 'observeSynthesis' | 'ttlSeconds' | 'queueLimit'>;

/** The option's French words of a request: Call for Help's to give (events carry the English). */
export type FrenchOptionWords = (requestId: number) => Promise<{ text: string | null; prompt: string | null }>;

export interface AnnouncementDeps extends AnnounceDeps {
  db: Queryable;
  frenchOptionWords: FrenchOptionWords;
}

/** What an announcement job is about, as its payload carries it from the request's event. */
export interface Announcement extends AnnouncedRequest {
  requestId: number;
  locationId: number;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

export function announcementOf(payload: Record<string, unknown>): Announcement {
  const details = (payload.details ?? {}) as Record<string, unknown>;
  return {
    requestId: Number(payload.request_id),
    locationId: Number(payload.location_id),
    status: String(payload.status),
    name: str(details.name),
    optionText: str(details.option_text),
    optionPrompt: str(details.option_prompt),
    claimedBy: str(details.claimed_by),
  };
}

export interface PreparedPlay {
  request: PlayRequest;
  audio: Awaited<ReturnType<typeof prepareAudio>>;
}

/** With no transaction open: what each edge device that announces the status says, synthesized. */
export async function prepareAnnouncement(deps: AnnouncementDeps, a: Announcement): Promise<PreparedPlay[]> {
  const edges = await announcingEdges(deps.db, a.locationId, a.status);
  const plays: PreparedPlay[] = [];
  let french: { text: string | null; prompt: string | null } | undefined;
  for (const { edge, language: raw } of edges) {
    const language = languageOf(raw);
    if (language === 'fr') french ??= await deps.frenchOptionWords(a.requestId);
    const words = language === 'fr' ? { optionText: french?.text ?? a.optionText, optionPrompt: french?.prompt ?? a.optionPrompt } : {};
    const text = announcementText({ ...a, ...words }, language);
    if (text === null) continue;
    const request: PlayRequest = {
      edge,
      source: 'announcement',
      text,
      actor: 'Call for Help',
      process: true,
      credential: 'service',
      apiTokenId: null,
      messaging: null,
      priority: isUrgent(a.status) ? 'urgent' : 'normal',
      language,
      cfh: { requestId: a.requestId, status: a.status },
    };
    plays.push({ request, audio: await prepareAudio(deps, request) });
  }
  return plays;
}

/** In the job's transaction: the plays queued, each edge's queue lock taken only now. */
export async function queueAnnouncement(q: Tx, deps: AnnounceDeps, plays: readonly PreparedPlay[], now: Date): Promise<void> {
  for (const { request, audio } of plays) await queuePlay(q, deps, request, audio, now);
}
