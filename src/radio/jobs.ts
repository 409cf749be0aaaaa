// The radio's delayed work: giving up a play message its edge device has not played by its
// expires_at (an "expired" event; the dispatcher already no longer sends it), and the CFH
// announcements (announce.ts).
import type { JobHandlers } from '../jobs/scheduler.ts';
import { RADIO_EXPIRE_JOB } from './play.ts';
import { discardExpired } from '../devices/outbox.ts';
import { insertRadioEvents } from './queue-store.ts';

export function radioJobs(extra: JobHandlers = {}): JobHandlers {
  return {
    [RADIO_EXPIRE_JOB]: async (q, payload, job) => {
      const messageId = String(payload.message_id);
      const at = new Date(job.runAt);
      if (await discardExpired(q, messageId, at)) await insertRadioEvents(q, 'expired', [messageId], at);
    },
    ...extra,
  };
}
