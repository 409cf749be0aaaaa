// The locker feature's delayed work: a delayed close, the end of a cool-off, and an order's pickup
// reminders and deadline.
import type { Clock } from '../clock.ts';
import type { JobHandlers } from '../jobs/scheduler.ts';
import { runDelayedClose } from './cabinets.ts';
import { runPickupJob } from './lifecycle.ts';
import { COOL_OFF_END_JOB, DELAYED_CLOSE_JOB, PICKUP_JOB } from './rules.ts';
import { endCoolOff } from './store.ts';

export function lockerJobs(deps: { clock: Clock }): JobHandlers {
  return {
    [DELAYED_CLOSE_JOB]: async (q, payload) => {
      if (typeof payload.command_id === 'string') await runDelayedClose(q, payload.command_id, deps.clock.now());
    },
    [COOL_OFF_END_JOB]: async (q, payload) => {
      if (typeof payload.cabinet_id === 'number') await endCoolOff(q, payload.cabinet_id, deps.clock.now());
    },
    [PICKUP_JOB]: async (q, payload) => {
      if (typeof payload.order === 'number' && typeof payload.step === 'number') await runPickupJob(q, payload.order, payload.step, deps.clock.now());
    },
  };
}
