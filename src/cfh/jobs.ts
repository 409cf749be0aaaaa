// Call for Help's delayed work: a request's timeout.
import type { JobHandlers } from '../jobs/scheduler.ts';
import { CFH_TIMEOUT_JOB, markTimedOut } from './store.ts';

export function cfhJobs(): JobHandlers {
  return {
    [CFH_TIMEOUT_JOB]: async (q, payload, job) => {
      await markTimedOut(q, Number(payload.request_id), job.runAt);
    },
  };
}
