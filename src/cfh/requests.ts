// Call for Help's operations (C0-C5), each one's whole story: the rules it applies, the store
// statements it makes, the answer it gives. Each change writes its event, and starts or ends its
// timers, in the statement that makes it; a step that was refused writes none. Every step acts
// as its actor (access/): it finds only requests within the actor's reach and records the token,
// when there is one. The radio's voice actions call claimRequest and markOnTheWay too, as the
// edge device that heard them; a customer holding a message_id cancels (C4) and reads (C5).
import { tokenOf, type Actor, type OrganizationActor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db, Queryable, Tx } from '../db/db.ts';
import { AppError, notFound } from '../http/errors.ts';
import { randomToken } from '../http/secrets.ts';
import { cancelOfClosed, creationProblems, decideOnTheWay, eventLead, type Staff } from './rules.ts';
import type { RequestRow, StatusRow } from './rows.ts';
import * as store from './store.ts';

export interface CfhDeps {
  db: Pick<Db, 'query' | 'run' | 'statement' | 'tx'>;
  clock: Clock;
  /** CFH_TIMEOUT_SECONDS: the timeout of a location without one of its own. */
  timeoutSeconds: number;
  /** CFH_ESCALATION_SECONDS: the escalation of a location without one of its own (0: none). */
  escalationSeconds: number;
}

/** A staff step's actor must belong to an organization (a customer only cancels and reads). */
function staffActor(actor: Actor): OrganizationActor {
  if (actor.kind === 'customer') throw new Error("a staff step needs the actor's organization");
  return actor;
}

export interface NewRequestInput {
  locationId: number;
  optionId: number;
  deviceId: number | null;
  displayId: number | null;
  callbuttonId: number | null;
  chatChannelId: string | null;
  source?: 'api' | 'call_button' | 'display';
  customText?: string | null;
  /** C9: the SHA-256 of the customer's browser id, when the page sent one. */
  browserDigest?: string | null;
}

/** 128 random bits, URL-safe: it travels in QR codes and customer page links. */
function newMessageId(): string {
  return randomToken(16);
}

/**
 * Inserts a request in the transaction of its use case (B1 and C9 check their device in the same one);
 * a 422 when the location or option is not within the actor's reach.
 */
export async function insertNewRequest(q: Tx, deps: CfhDeps, actor: Actor, input: NewRequestInput): Promise<RequestRow> {
  const source = input.source ?? 'api';
  const { reach } = staffActor(actor);
  const inserted = await store.insertRequest(
    q,
    {
      ...input,
      source,
      customText: input.customText ?? null,
      browserDigest: input.browserDigest ?? null,
      organizationId: reach.organizationId,
      locationIds: reach.locationIds,
      tokenId: tokenOf(actor),
      messageId: newMessageId(),
      requestFrom: source === 'call_button' ? 'call_button' : null,
      defaultTimeoutSeconds: deps.timeoutSeconds,
      defaultEscalationSeconds: deps.escalationSeconds,
    },
    { created: eventLead({ status: 'created' }), completed: eventLead({ status: 'recorded' }) },
    deps.clock.now(),
  );
  const problems = creationProblems({
    location: inserted.locationFound,
    option: inserted.optionFound,
    button: inserted.buttonFound,
    display: inserted.displayFound,
  });
  if (problems !== null) {
    const message = Object.entries(problems)
      .map(([field, list]) => `${field}: ${list.join(', ')}`)
      .join('; ');
    throw new AppError(422, 'validation_failed', message, { errors: problems });
  }
  if (inserted.row === null) throw new Error('a CFH request that passed its checks was not inserted');
  return inserted.row;
}

/** C0: the request, its "created" event and its timers, or a 422 when the location or option is not within the actor's reach. */
export async function createRequest(deps: CfhDeps, actor: Actor, input: NewRequestInput): Promise<RequestRow> {
  // The checks run inside the insert's statement, so a valid request costs one round trip.
  return deps.db.statement((q) => insertNewRequest(q, deps, actor, input));
}

/** After a conditional update that changed nothing: refused (false) if the request exists, else 404. */
async function refusedOrNotFound(deps: CfhDeps, actor: Actor, messageId: string): Promise<false> {
  if (!(await store.exists(deps.db, actor, messageId))) throw notFound('CFH request');
  return false;
}

/** C1: true if this call claimed the request; of concurrent claims (and a racing timeout) exactly one wins. */
export async function claimRequest(deps: CfhDeps, actor: Actor, messageId: string, staff: Staff): Promise<boolean> {
  staffActor(actor);
  const lead = eventLead({ status: 'claimed', by: staff.name });
  const claimed = await deps.db.statement((q) => store.claim(q, actor, messageId, staff, tokenOf(actor), lead, deps.clock.now()));
  return claimed || refusedOrNotFound(deps, actor, messageId);
}

/**
 * C2: true if the employee is (now, or already) on the way. The decision needs the claimer, so
 * the request is locked while it is made and written; claiming an unclaimed request on the way
 * records both steps.
 */
export async function markOnTheWay(deps: CfhDeps, actor: Actor, messageId: string, staff: Staff): Promise<boolean> {
  staffActor(actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const state = await store.lockForOnTheWay(q, actor, messageId);
    if (state === null) throw notFound('CFH request');
    const decision = decideOnTheWay(state, staff);
    if (!decision.allowed) return false;
    // A repeat is a success that changes nothing, so it records nothing either.
    if (decision.claims || decision.goes) {
      const leads = { claimed: eventLead({ status: 'claimed', by: staff.name }), onTheWay: eventLead({ status: 'on_the_way', by: staff.name }) };
      await store.writeOnTheWay(q, state.id, decision, staff, tokenOf(actor), leads, now);
    }
    return true;
  });
}

/**
 * C3: true if this call completed the request (any open one can be, by whoever helped). When the
 * location has outcomes, customer_status must be one of their keys (else 422, nothing changed); a
 * person completes a request that must be scanned only once it was (else 409 scan_required).
 */
export async function completeRequest(deps: CfhDeps, actor: Actor, messageId: string, staff: Staff, customerStatus: string): Promise<boolean> {
  staffActor(actor);
  // A person (the console, the staff app) completes a request that must be scanned only after its
  // scan (section 19); chat integrations and hubs, which cannot scan, complete as before.
  const scanFirst = actor.kind === 'person';
  const lead = eventLead({ status: 'completed', by: staff.name });
  const result = await deps.db.statement((q) =>
    store.complete(q, actor, messageId, staff, customerStatus, tokenOf(actor), lead, deps.clock.now(), { checkOutcome: true, scanFirst }),
  );
  if (!result.found) throw notFound('CFH request');
  if (!result.outcomeOk) {
    throw new AppError(422, 'validation_failed', 'customer_status: is not an outcome of this location', {
      errors: { customer_status: ['is not an outcome of this location'] },
    });
  }
  if (scanFirst && result.scanMissing && !result.completed) {
    throw new AppError(409, 'scan_required', 'scan the code on the button or beside the display before completing this request');
  }
  return result.completed;
}

/** C4: the request, cancelled now or already; a completed request is a 409 (the customer was helped). */
export async function cancelRequest(deps: CfhDeps, actor: Actor, messageId: string): Promise<RequestRow> {
  const lead = eventLead({ status: 'cancelled' });
  const cancelled = await deps.db.statement((q) => store.cancel(q, actor, messageId, tokenOf(actor), lead, deps.clock.now()));
  if (cancelled !== null) return cancelled;
  // Closed is final, so what is read now is what refused the update.
  const current = await store.findRecord(deps.db, actor, messageId);
  if (current === null) throw notFound('CFH request');
  if (cancelOfClosed(current) === 'conflict') {
    throw new AppError(409, 'cfh_request_completed', 'the request is already completed and cannot be cancelled');
  }
  return current;
}

/** C5: the request and its option, in one read. */
export async function requestStatus(deps: { db: Queryable }, actor: Actor, messageId: string): Promise<StatusRow> {
  const row = await store.findStatus(deps.db, actor, messageId);
  if (row === null) throw notFound('CFH request');
  return row;
}
