// Scan to complete (contract section 19): the associate scans the code of the button or display
// (or the option) a request came from. A right code records their arrival: employee_arrived_at, an
// `arrived` step and event, in one statement; a wrong one changes nothing and says so.
import { tokenOf, type PersonActor } from '../access/actor.ts';
import { AppError, invalid, notFound } from '../http/errors.ts';
import { matchesDigest } from '../http/secrets.ts';
import type { CfhDeps } from './requests.ts';
import { eventLead, type Staff } from './rules.ts';
import { normalizeScanCode } from './scan-codes.ts';
import * as store from './arrival-store.ts';

export interface Arrival {
  message_id: string;
  employee_has_arrived: true;
  employee_arrived_at: string;
}

/** A right scan of an open request that must be scanned: its arrival (now, or when first scanned). */
export async function recordArrival(deps: CfhDeps, actor: PersonActor, messageId: string, typed: string, staff: Staff): Promise<Arrival> {
  const code = normalizeScanCode(typed);
  return deps.db.tx(async (q) => {
    const target = await store.lockForScan(q, actor, messageId);
    if (target === null) throw notFound('CFH request');
    if (!target.require_scan) throw new AppError(409, 'scan_not_required', 'this request does not need a scan: complete it');
    if (target.is_closed) throw new AppError(409, 'cfh_request_closed', 'this request is already closed');
    if (code === null || !target.digests.some((d) => matchesDigest(code, d))) {
      throw invalid('code', "is not the code of this request's button, display or option");
    }
    if (target.employee_arrived_at !== null) return { message_id: messageId, employee_has_arrived: true, employee_arrived_at: target.employee_arrived_at };
    const at = await store.writeArrival(q, target.id, staff, tokenOf(actor), eventLead({ status: 'arrived', by: staff.name }), deps.clock.now());
    return { message_id: messageId, employee_has_arrived: true, employee_arrived_at: at };
  });
}
