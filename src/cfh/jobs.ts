// Call for Help's delayed work (contract section 10): a request's escalation, timeout, reminders
// and automatic completion, each in its job's own transaction (the scheduler's), each a
// conditional change that does nothing when a claim, completion or cancel came first.
import type { JobHandlers } from '../jobs/scheduler.ts';
import { decideReminder, eventLead, type ReminderPhase } from './rules.ts';
import { CFH_AUTO_COMPLETE_JOB, CFH_ESCALATION_JOB, CFH_REMINDER_JOB, CFH_TIMEOUT_JOB } from './sql.ts';
import { autoComplete, lockForReminder, markEscalated, markTimedOut, writeReminder } from './timer-store.ts';

export function cfhJobs(): JobHandlers {
  return {
    [CFH_TIMEOUT_JOB]: async (q, payload, job) => {
      await markTimedOut(q, Number(payload.request_id), job.runAt, eventLead({ status: 'timed_out' }));
    },
    [CFH_ESCALATION_JOB]: async (q, payload, job) => {
      await markEscalated(q, Number(payload.request_id), job.runAt, eventLead({ status: 'escalated' }));
    },
    [CFH_AUTO_COMPLETE_JOB]: async (q, payload, job) => {
      await autoComplete(q, Number(payload.request_id), job.runAt, eventLead({ status: 'auto_completed' }));
    },
    [CFH_REMINDER_JOB]: async (q, payload, job) => {
      const requestId = Number(payload.request_id);
      const phase: ReminderPhase = payload.phase === 'claimed' ? 'claimed' : 'unclaimed';
      const state = await lockForReminder(q, requestId);
      if (state === null) return;
      const decision = decideReminder(state, phase, new Date(job.runAt));
      if (!decision.fire) return;
      await writeReminder(q, requestId, phase, Number(payload.n ?? 0), job.runAt, decision.next, eventLead({ status: 'reminder' }));
    },
  };
}
