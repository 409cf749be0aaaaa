// The radio's delayed work: giving up a play message its edge device has not played by its
// expires_at (an "expired" event; the dispatcher already no longer sends it), and the CFH
// announcements (announce.ts), asked for by the event log's subscriber here. An announcement is a
// PreparedJob (jobs/scheduler.ts): its speech is made under the job's lease with no transaction
// open, and its plays commit with the job, once, whichever worker ends up holding it.
import type { Clock } from '../clock.ts';
import { discardExpired } from '../devices/outbox.ts';
import type { EventHandler } from '../events/subscribers.ts';
import type { AnyJobHandlers, PreparedJob } from '../jobs/scheduler.ts';
import { ANNOUNCE_COALESCE_SECONDS } from './announce-rules.ts';
import { askForAnnouncements } from './announce-store.ts';
import { announcementOf, prepareAnnouncement, queueAnnouncement, type AnnouncementDeps, type PreparedPlay } from './announce.ts';
import { RADIO_EXPIRE_JOB } from './play.ts';
import { insertRadioEvents } from './queue-store.ts';

export const RADIO_ANNOUNCE_JOB = 'radio.announce';

/** The announcements subscriber's name: its cursor row. */
export const RADIO_ANNOUNCEMENTS_SUBSCRIBER = 'radio-announcements';

/** Long enough for every edge device's synthesis of one announcement (each bounded by the speech
 * engines' timeout); a worker that stopped meanwhile leaves the job to another once it ends. */
const ANNOUNCE_LEASE_MS = 120_000;

export function announcementSubscriber(deps: { clock: Clock }): EventHandler {
  return async (q, events) => {
    await askForAnnouncements(q, RADIO_ANNOUNCE_JOB, events, new Date(deps.clock.now().getTime() + ANNOUNCE_COALESCE_SECONDS * 1000));
  };
}

export function radioJobs(deps: AnnouncementDeps): AnyJobHandlers {
  const announce: PreparedJob<PreparedPlay[]> = {
    leaseMs: ANNOUNCE_LEASE_MS,
    prepare: (payload) => prepareAnnouncement(deps, announcementOf(payload)),
    // Said as of the time it was due, whenever the speech was ready.
    commit: (q, plays, _payload, job) => queueAnnouncement(q, deps, plays, new Date(job.runAt)),
  };
  return {
    [RADIO_EXPIRE_JOB]: async (q, payload, job) => {
      const messageId = String(payload.message_id);
      const at = new Date(job.runAt);
      if (await discardExpired(q, messageId, at)) await insertRadioEvents(q, 'expired', [messageId], at);
    },
    [RADIO_ANNOUNCE_JOB]: announce,
  };
}
