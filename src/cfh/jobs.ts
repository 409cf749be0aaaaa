// Call for Help's delayed work: a request's timeout, with its "timed_out" event, in the job's
// own transaction (the scheduler's).
import type { JobHandlers } from '../jobs/scheduler.ts';
import { eventLead } from './rules.ts';
import { CFH_TIMEOUT_JOB, markTimedOut } from './store.ts';

export function cfhJobs(): JobHandlers {
  return {
    [CFH_TIMEOUT_JOB]: async (q, payload, job) => {
      await markTimedOut(q, Number(payload.request_id), job.runAt, eventLead({ status: 'timed_out' }));
    },
  };
}
