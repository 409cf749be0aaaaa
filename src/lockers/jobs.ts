// The locker feature's delayed work: a delayed close, and the end of a cool-off.
import type { Clock } from '../clock.ts';
import type { JobHandlers } from '../jobs/scheduler.ts';
import { runDelayedClose } from './cabinets.ts';
import { COOL_OFF_END_JOB, DELAYED_CLOSE_JOB } from './rules.ts';
import { endCoolOff } from './store.ts';

export function lockerJobs(deps: { clock: Clock }): JobHandlers {
  return {
    [DELAYED_CLOSE_JOB]: async (q, payload) => {
      if (typeof payload.command_id === 'string') await runDelayedClose(q, payload.command_id, deps.clock.now());
    },
    [COOL_OFF_END_JOB]: async (q, payload) => {
      if (typeof payload.cabinet_id === 'number') await endCoolOff(q, payload.cabinet_id, deps.clock.now());
    },
  };
}
