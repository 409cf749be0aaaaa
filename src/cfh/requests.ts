// Call for Help's operations (C0-C5), each one's whole story: the rules it applies, the store
// statements it makes, the answer it gives. Each change writes its event in the statement that
// makes it, so C0, C1, C3 and C4 stay one round trip; a step that was refused writes none.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { AppError, notFound } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import { cancelOfClosed, creationProblems, decideOnTheWay, eventLead, type Staff } from './rules.ts';
import type { RequestRow, StatusRow } from './rows.ts';
import * as store from './store.ts';

export interface CfhDeps {
  db: Pick<Db, 'query' | 'statement' | 'tx'>;
  clock: Clock;
  /** CFH_TIMEOUT_SECONDS: the timeout of a location without one of its own. */
  timeoutSeconds: number;
}

/** Whose call it is: everything is looked up within the organization, and the token is recorded with each step. */
export interface Caller {
  organizationId: number;
  tokenId: number;
}

export interface NewRequestInput {
  locationId: number;
  optionId: number;
  deviceId: number | null;
  displayId: number | null;
  callbuttonId: number | null;
  chatChannelId: string | null;
}

/** 128 random bits, URL-safe: it travels in QR codes and customer page links. */
function newMessageId(): string {
  return randomToken(16);
}

/** C0: the request, its "created" event and its timeout job, or a 422 when the location or option is not the caller's. */
export async function createRequest(deps: CfhDeps, caller: Caller, input: NewRequestInput): Promise<RequestRow> {
  const request = {
    ...input, organizationId: caller.organizationId, tokenId: caller.tokenId, messageId: newMessageId(), defaultTimeoutSeconds: deps.timeoutSeconds,
  };
  // The checks run inside the insert's statement, so a valid request costs one round trip.
  const inserted = await deps.db.statement((q) => store.insertRequest(q, request, eventLead({ status: 'created' }), deps.clock.now()));
  const problems = creationProblems({ location: inserted.locationFound, option: inserted.optionFound });
  if (problems !== null) {
    const message = Object.entries(problems).map(([field, list]) => `${field}: ${list.join(', ')}`).join('; ');
    throw new AppError(422, 'validation_failed', message, { errors: problems });
  }
  if (inserted.row === null) throw new Error('a CFH request that passed its checks was not inserted');
  return inserted.row;
}

/** After a conditional update that changed nothing: refused (false) if the request exists, else 404. */
async function refusedOrNotFound(deps: CfhDeps, caller: Caller, messageId: string): Promise<false> {
  if (!(await store.exists(deps.db, caller.organizationId, messageId))) throw notFound('CFH request');
  return false;
}

/** C1: true if this call claimed the request; of concurrent claims exactly one does. */
export async function claimRequest(deps: CfhDeps, caller: Caller, messageId: string, staff: Staff): Promise<boolean> {
  const lead = eventLead({ status: 'claimed', by: staff.name });
  const claimed = await deps.db.statement((q) => store.claim(q, caller.organizationId, messageId, staff, caller.tokenId, lead, deps.clock.now()));
  return claimed || refusedOrNotFound(deps, caller, messageId);
}

/**
 * C2: true if the employee is (now, or already) on the way. The decision needs the claimer, so
 * the request is locked while it is made and written; claiming an unclaimed request on the way
 * records both steps.
 */
export async function markOnTheWay(deps: CfhDeps, caller: Caller, messageId: string, staff: Staff): Promise<boolean> {
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const state = await store.lockForOnTheWay(q, caller.organizationId, messageId);
    if (state === null) throw notFound('CFH request');
    const decision = decideOnTheWay(state, staff);
    if (!decision.allowed) return false;
    // A repeat is a success that changes nothing, so it records nothing either.
    if (decision.claims || decision.goes) {
      const leads = { claimed: eventLead({ status: 'claimed', by: staff.name }), onTheWay: eventLead({ status: 'on_the_way', by: staff.name }) };
      await store.writeOnTheWay(q, state.id, decision, staff, caller.tokenId, leads, now);
    }
    return true;
  });
}

/** C3: true if this call completed the request (any open one can be, by whoever helped). */
export async function completeRequest(deps: CfhDeps, caller: Caller, messageId: string, staff: Staff, customerStatus: string): Promise<boolean> {
  const lead = eventLead({ status: 'completed', by: staff.name });
  const completed = await deps.db.statement((q) =>
    store.complete(q, caller.organizationId, messageId, staff, customerStatus, caller.tokenId, lead, deps.clock.now()));
  return completed || refusedOrNotFound(deps, caller, messageId);
}

/** C4: the request, cancelled now or already; a completed request is a 409 (the customer was helped). */
export async function cancelRequest(deps: CfhDeps, caller: Caller, messageId: string): Promise<RequestRow> {
  const lead = eventLead({ status: 'cancelled' });
  const cancelled = await deps.db.statement((q) => store.cancel(q, caller.organizationId, messageId, caller.tokenId, lead, deps.clock.now()));
  if (cancelled !== null) return cancelled;
  // Closed is final, so what is read now is what refused the update.
  const current = await store.findRecord(deps.db, caller.organizationId, messageId);
  if (current === null) throw notFound('CFH request');
  if (cancelOfClosed(current) === 'conflict') {
    throw new AppError(409, 'cfh_request_completed', 'the request is already completed and cannot be cancelled');
  }
  return current;
}

/** C5: the request and its option, in one read. */
export async function requestStatus(deps: Pick<CfhDeps, 'db'>, organizationId: number, messageId: string): Promise<StatusRow> {
  const row = await store.findStatus(deps.db, organizationId, messageId);
  if (row === null) throw notFound('CFH request');
  return row;
}
