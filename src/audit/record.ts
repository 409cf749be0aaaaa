// The audit log's one writer (contract section 17): an entry is written by the statement, or in the
// transaction, of the change it records, so there is never a change without its entry or an entry
// of a change that rolled back. Nothing updates or deletes an entry but retention.
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';

export type AuditActorType = 'person' | 'service_account' | 'provisioning' | 'system';

export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  name: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | number | null;
  name?: string | null;
}

/** Where a request came from, as the entries of what it did show it. */
export interface AuditOrigin {
  ip: string | null;
  userAgent: string | null;
}

export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

export interface AuditEntry {
  actor: AuditActor;
  /** A stable word: `person.created`, `membership.granted`, `sign_in.failed`... */
  action: string;
  target: AuditTarget | null;
  organizationId: number | null;
  locationId?: number | null;
  changes?: AuditChanges;
  origin?: AuditOrigin;
}

/** What a secret's change shows: never the secret itself. */
export const SECRET_CHANGE = '[secret]';

const USER_AGENT_MAX = 300;
const TEXT_MAX = 300;

export const systemActor: AuditActor = { type: 'system', id: null, name: 'storeops' };
export const provisioningActor = (file: string | null): AuditActor => ({ type: 'provisioning', id: null, name: file });

/** A person as the audit log names them. */
export const personAuditActor = (p: { id: number; name: string }): AuditActor => ({ type: 'person', id: String(p.id), name: p.name });

/** Someone who tried to sign in as nobody known: whatever they typed is not kept (it may be a
 * password typed in the wrong field). */
export const unknownPerson: AuditActor = { type: 'person', id: null, name: null };

/** The audit log's name for an actor of a request. Devices and customers are not in the audit log. */
export function auditActorOf(actor: Actor): AuditActor {
  if (actor.kind === 'person') return personAuditActor({ id: actor.personId, name: actor.name });
  if (actor.kind === 'api_token') return { type: 'service_account', id: String(actor.serviceAccountId), name: actor.serviceAccountName };
  return systemActor;
}

export function auditOriginOf(request: FastifyRequest): AuditOrigin {
  const agent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof agent === 'string' ? agent.slice(0, USER_AGENT_MAX) : null };
}

/** The fields that differ between two views of an object; `secrets` show as "[secret]". */
export function changesBetween(before: Record<string, unknown> | null, after: Record<string, unknown> | null, secrets: readonly string[] = []): AuditChanges {
  const changes: AuditChanges = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    const from = before?.[key] ?? null;
    const to = after?.[key] ?? null;
    if (JSON.stringify(from) === JSON.stringify(to)) continue;
    changes[key] = secrets.includes(key) ? { from: from === null ? null : SECRET_CHANGE, to: to === null ? null : SECRET_CHANGE } : { from, to };
  }
  return changes;
}

const clip = (value: string | null | undefined): string | null => (value === null || value === undefined ? null : value.slice(0, TEXT_MAX));

/** The entry's INSERT, to run in the change's transaction or as one of its statement's CTEs. */
export function auditInsert(entry: AuditEntry, at: Date): Sql {
  const target = entry.target;
  return sql`INSERT INTO audit_entries (at, organization_id, location_id, actor_type, actor_id, actor_name, action,
      target_type, target_id, target_name, changes, ip, user_agent)
    VALUES (${at}, ${entry.organizationId}, ${entry.locationId ?? null}, ${entry.actor.type}, ${clip(entry.actor.id)}, ${clip(entry.actor.name)},
      ${entry.action}, ${target?.type ?? null}, ${target?.id === null || target === null ? null : String(target.id)}, ${clip(target?.name)},
      ${JSON.stringify(entry.changes ?? {})}::jsonb, ${entry.origin?.ip ?? null}, ${entry.origin?.userAgent ?? null})`;
}

export async function writeAudit(q: Queryable, entry: AuditEntry, at: Date): Promise<void> {
  await q.run(auditInsert(entry, at));
}
