// Section 18's operations on the store's setup objects (locations, lockers, CFH options and
// outcomes, call buttons, displays), each one transaction: the administrator's reach (404 out of
// it, 403 for what its role may not change), the file's ownership (409 managed_by_file), the
// version (412), the provisioning file's own rules (provisioning/entries.ts: 422 by field), the
// write, and its audit entry. Each kind (ObjectKind) says how its body maps to the file's entry;
// the rest is the same for all.
import type { OrganizationActor } from '../access/actor.ts';
import { auditActorOf, changesBetween, writeAudit, type AuditChanges, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { invalid, notFound } from '../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../http/if-match.ts';
import { FieldProblem, type Columns } from '../provisioning/entries.ts';
import { deleteUnlessUsed, insertObject, listObjects, objectById, uniqueRefusal, updateObject, type ObjectRow, type ObjectSource } from './object-store.ts';
import { checkNotFileManaged, checkOrganization, forbidden, scopeOf, type AdminScope } from './rules.ts';

export interface ObjectDeps {
  db: Db;
  clock: Clock;
}

/** Who asks, and from where (the audit entries say both). */
export interface Acting {
  actor: OrganizationActor;
  origin: AuditOrigin;
}

/** The file's entry of an object, as administration sees and changes it. */
export type Entry = { id: number; location_id?: number | null | undefined; enabled?: boolean | undefined } & Record<string, unknown>;

export interface ObjectKind<R extends ObjectRow, E extends Entry> {
  /** The audit log's target type and the first word of its actions ("call_button.created"). */
  type: string;
  /** In messages: "call button". */
  what: string;
  source: ObjectSource;
  /** The object as the file's entry (its audit fields, an update's starting point, the export's entry). */
  entryOf(row: R): E;
  /** What the audit log shows of an entry (no secret). */
  shown(entry: E): Record<string, unknown>;
  nameOf(entry: E): string;
  /** The rules beyond the schema (FieldProblem: 422 by field). */
  check(tx: Tx, entry: E, organizationId: number): Promise<void>;
  columns(entry: E, organizationId: number): Columns;
  /** Unique rules by constraint name, and the field each is about. */
  unique?: Readonly<Record<string, string>>;
  /** Only organization administrators create one (a location). */
  organizationOnly?: boolean;
  /** The location its audit entries are filed under (default: its location_id). */
  auditLocation?(entry: E): number | null;
  /** What else a write does (a locker's cabinets), in its transaction. */
  afterWrite?(tx: Tx, id: number, entry: E, before: R | null, now: Date): Promise<AuditChanges>;
  /** What a delete removes, in order (the object last). */
  deletes?(id: number): ReturnType<typeof sql>[];
}

/** 422 by field for a rule of the file's (entries.ts) or a unique rule. */
async function ruled<T>(kind: ObjectKind<ObjectRow, Entry>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof FieldProblem) throw invalid(err.field, err.problem);
    throw uniqueRefusal(err, kind.unique ?? {});
  }
}

/** The administrator may change objects of this location (null: organization-wide ones). */
export async function checkPlace(tx: Tx, scope: AdminScope, locationId: number | null, what: string): Promise<void> {
  if (locationId === null) {
    if (scope.locationIds !== null) throw forbidden(`only organization admins change ${what}s of the whole organization`);
    return;
  }
  const [row] = await tx.query('SELECT 1 FROM locations WHERE id = $1 AND organization_id = $2', [locationId, scope.organizationId]);
  if (row === undefined) throw invalid('location_id', `location ${locationId} is not a location of your organization`);
  if (scope.locationIds !== null && !scope.locationIds.includes(locationId)) throw forbidden(`location ${locationId} is not one you administer`);
}

function audit(
  tx: Tx,
  acting: Acting,
  kind: ObjectKind<ObjectRow, Entry>,
  entry: Entry,
  organizationId: number,
  action: string,
  changes: AuditChanges,
  now: Date,
) {
  return writeAudit(
    tx,
    {
      actor: auditActorOf(acting.actor),
      action: `${kind.type}.${action}`,
      target: { type: kind.type, id: entry.id, name: kind.nameOf(entry) },
      organizationId,
      locationId: kind.auditLocation?.(entry) ?? entry.location_id ?? null,
      changes,
      origin: acting.origin,
    },
    now,
  );
}

export async function listOf<R extends ObjectRow>(deps: ObjectDeps, kind: ObjectKind<R, Entry>, actor: OrganizationActor, locationId?: number): Promise<R[]> {
  const filter = locationId === undefined ? sql`true` : sql`${kind.source.location} = ${locationId}`;
  return listObjects<R>(deps.db, kind.source, scopeOf(actor), filter);
}

export async function getOf<R extends ObjectRow>(deps: ObjectDeps, kind: ObjectKind<R, Entry>, actor: OrganizationActor, id: number): Promise<R> {
  const row = await objectById<R>(deps.db, kind.source, scopeOf(actor), id);
  if (row === undefined) throw notFound(kind.what);
  return row;
}

/** Makes an object of administration from a body that is the file's entry (its id optional). */
export async function createOf<R extends ObjectRow, E extends Entry>(
  deps: ObjectDeps,
  kind: ObjectKind<R, E>,
  acting: Acting,
  body: Omit<E, 'id'> & { id?: number | undefined },
): Promise<R> {
  const scope = scopeOf(acting.actor);
  if (kind.organizationOnly === true && scope.locationIds !== null) throw forbidden(`only organization admins create a ${kind.what}`);
  checkOrganization(scope, body.organization_id as number | undefined);
  const now = deps.clock.now();
  const k = kind as unknown as ObjectKind<ObjectRow, Entry>;
  return deps.db.tx(async (tx) => {
    if (kind.organizationOnly !== true) await checkPlace(tx, scope, (body.location_id as number | null | undefined) ?? null, kind.what);
    const id = await ruled(k, async () => {
      await kind.check(tx, { id: 0, ...body } as E, scope.organizationId);
      return insertObject(tx, kind.source, body.id, kind.columns({ id: 0, ...body } as E, scope.organizationId), now);
    });
    const entry = { ...body, id } as E;
    const more = kind.afterWrite === undefined ? {} : await ruled(k, () => (kind.afterWrite as NonNullable<typeof kind.afterWrite>)(tx, id, entry, null, now));
    await audit(tx, acting, k, entry, scope.organizationId, 'created', { ...changesBetween(null, kind.shown(entry)), ...more }, now);
    return (await objectById<R>(tx, kind.source, { organizationId: scope.organizationId, locationIds: null }, id)) as R;
  });
}

/** The object, locked, that this administrator may change: 404 out of reach, 403 beyond its role,
 * 409 when the file owns it, 412 when the version is stale. */
export async function changeable<R extends ObjectRow>(
  tx: Tx,
  kind: ObjectKind<R, Entry>,
  scope: AdminScope,
  id: number,
  expected: ExpectedVersions,
): Promise<R> {
  const row = await objectById<R>(tx, kind.source, scope, id, true);
  if (row === undefined) throw notFound(kind.what);
  if (kind.organizationOnly !== true && row.location_id === null && scope.locationIds !== null) {
    throw forbidden(`only organization admins change ${kind.what}s of the whole organization`);
  }
  checkNotFileManaged(row.managed_by, `this ${kind.what}`);
  checkVersion(expected, row.version);
  return row;
}

/** Changes the fields the body names (the others stay as they are). */
export async function updateOf<R extends ObjectRow, E extends Entry>(
  deps: ObjectDeps,
  kind: ObjectKind<R, E>,
  acting: Acting,
  id: number,
  body: Partial<E>,
  expected: ExpectedVersions,
): Promise<R> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  const k = kind as unknown as ObjectKind<ObjectRow, Entry>;
  return deps.db.tx(async (tx) => {
    const before = await changeable(tx, kind, scope, id, expected);
    const was = kind.entryOf(before);
    const given = Object.fromEntries(Object.entries(body).filter(([name, v]) => v !== undefined && name !== 'version' && name !== 'id'));
    const entry = { ...was, ...given, id } as E;
    if ((entry.location_id ?? null) !== (was.location_id ?? null)) await checkPlace(tx, scope, entry.location_id ?? null, kind.what);
    await ruled(k, async () => {
      await kind.check(tx, entry, before.organization_id);
      await updateObject(tx, kind.source, id, kind.columns(entry, before.organization_id), now);
    });
    const more =
      kind.afterWrite === undefined ? {} : await ruled(k, () => (kind.afterWrite as NonNullable<typeof kind.afterWrite>)(tx, id, entry, before, now));
    const changes = { ...changesBetween(kind.shown(was), kind.shown(entry)), ...more };
    const action = changes.enabled === undefined ? 'updated' : entry.enabled === false ? 'disabled' : 'enabled';
    await audit(tx, acting, k, entry, before.organization_id, action, changes, now);
    return (await objectById<R>(tx, kind.source, { organizationId: before.organization_id, locationIds: null }, id)) as R;
  });
}

/** Deletes an object without history (409 in_use otherwise: retire it with enabled false). */
export async function deleteOf<R extends ObjectRow>(
  deps: ObjectDeps,
  kind: ObjectKind<R, Entry>,
  acting: Acting,
  id: number,
  expected: ExpectedVersions,
): Promise<void> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  await deps.db.tx(async (tx) => {
    const before = await changeable(tx, kind, scope, id, expected);
    const entry = kind.entryOf(before);
    await deleteUnlessUsed(tx, `this ${kind.what}`, kind.deletes?.(id) ?? [sql`DELETE FROM ${sql.raw(kind.source.table)} WHERE id = ${id}`]);
    await audit(
      tx,
      acting,
      kind as unknown as ObjectKind<ObjectRow, Entry>,
      entry,
      before.organization_id,
      'deleted',
      changesBetween(kind.shown(entry), null),
      now,
    );
  });
}
