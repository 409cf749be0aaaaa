// Announcements of Call for Help on the radio (contract section 12), after the fact as every
// effect is: the event log's "radio-announcements" subscriber asks, for each request whose status
// changed, for one announcement job a few seconds later (a later status of the same request
// replaces it, so a quick succession says only the latest); the job, run once across instances,
// speaks the status on each edge device of the location that announces it, in the location's
// language, urgent for an escalation.
import type { Clock } from '../clock.ts';
import type { EventHandler } from '../events/subscribers.ts';
import type { JobHandler } from '../jobs/scheduler.ts';
import { announcementText, ANNOUNCE_COALESCE_SECONDS, isUrgent, languageOf } from './announce-rules.ts';
import { announcingEdges, askForAnnouncements, frenchOption } from './announce-store.ts';
import { prepareAudio, queuePlay, type PlayDeps, type PlayRequest } from './play.ts';

export { RADIO_ANNOUNCE_JOB } from './announce-store.ts';

/** The subscribers' names: their cursor rows. */
export const RADIO_ANNOUNCEMENTS_SUBSCRIBER = 'radio-announcements';
/** Keeps radio_open_requests, what voice actions can claim (voice-store.ts followRequests). */
export const RADIO_REQUESTS_SUBSCRIBER = 'radio-requests';

export function announcementSubscriber(deps: { clock: Clock }): EventHandler {
  return async (q, events) => {
    await askForAnnouncements(q, events, new Date(deps.clock.now().getTime() + ANNOUNCE_COALESCE_SECONDS * 1000));
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

export type AnnounceDeps = Pick<PlayDeps, 'speech' | 'observeSynthesis' | 'ttlSeconds' | 'queueLimit'>;

/**
 * The job: the request's latest status, said on each edge device that announces it. Every edge's
 * audio is made first, then the plays are queued: no edge's queue lock is held while another edge's
 * speech is synthesized (the job's transaction commits them with the job, exactly once).
 */
export function announceJob(deps: AnnounceDeps): JobHandler {
  return async (q, payload, job) => {
    const status = String(payload.status);
    const requestId = Number(payload.request_id);
    const details = (payload.details ?? {}) as Record<string, unknown>;
    const edges = await announcingEdges(q, Number(payload.location_id), status);
    if (edges.length === 0) return;
    const now = new Date(job.runAt);
    const plays: { request: PlayRequest; audio: Awaited<ReturnType<typeof prepareAudio>> }[] = [];
    for (const { edge, language: raw } of edges) {
      const language = languageOf(raw);
      const french = language === 'fr' ? await frenchOption(q, requestId) : null;
      const text = announcementText(
        {
          status,
          name: str(details.name),
          optionText: french?.text ?? str(details.option_text),
          optionPrompt: french?.prompt ?? str(details.option_prompt),
          claimedBy: str(details.claimed_by),
        },
        language,
      );
      if (text === null) continue;
      const request = {
        edge,
        source: 'announcement' as const,
        text,
        actor: 'Call for Help',
        process: true,
        credential: 'service' as const,
        apiTokenId: null,
        messaging: null,
        priority: isUrgent(status) ? ('urgent' as const) : ('normal' as const),
        language,
        cfh: { requestId, status },
      };
      plays.push({ request, audio: await prepareAudio(deps, request) });
    }
    for (const { request, audio } of plays) await queuePlay(q, deps, request, audio, now);
  };
}
