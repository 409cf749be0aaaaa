// The SQL every administered setup object shares (locations, lockers, options, outcomes, buttons,
// displays): reading them within an administrator's reach, inserting with an id of the service's,
// updating with its version increased, and deleting unless history refers to it.
import type { Queryable } from '../db/db.ts';
import { sql, type Sql } from '../db/sql.ts';
import { AppError, invalid } from '../http/errors.ts';
import type { Columns } from '../provisioning/entries.ts';
import type { AdminScope } from './rules.ts';

/** What every administered row carries beside its own fields. */
export interface ObjectRow {
  id: number;
  organization_id: number;
  /** null: of the whole organization (an option for every location). */
  location_id: number | null;
  enabled: boolean;
  version: number;
  managed_by: 'admin' | 'file';
  created_at: string;
  updated_at: string;
}

/** Where a kind's rows are read: its table (alias x) and how its organization and location are named. */
export interface ObjectSource {
  table: string;
  /** The select list and FROM of one row per object, its columns named as the row's fields. */
  select: Sql;
  organization: Sql;
  location: Sql;
  /** The table's version column (a locker's is object_version). */
  versionColumn: string;
  sequence: string;
}

/** Within the administrator's reach: its organization and, when limited, its locations (an
 * organization-wide object is seen by everyone of the organization, changed only organization-wide). */
function within(source: ObjectSource, scope: AdminScope): Sql {
  const limits = scope.locationIds === null ? null : [...scope.locationIds];
  return sql`${source.organization} = ${scope.organizationId} AND (${limits}::int[] IS NULL OR ${source.location} IS NULL OR ${source.location} = ANY (${limits}::int[]))`;
}

export async function listObjects<R extends ObjectRow>(q: Queryable, source: ObjectSource, scope: AdminScope, filter: Sql = sql`true`): Promise<R[]> {
  return q.run<R>(sql`${source.select} WHERE ${within(source, scope)} AND ${filter} ORDER BY x.id`);
}

export async function objectById<R extends ObjectRow>(q: Queryable, source: ObjectSource, scope: AdminScope, id: number, lock = false): Promise<R | undefined> {
  const [row] = await q.run<R>(sql`${source.select} WHERE x.id = ${id} AND ${within(source, scope)} ${lock ? sql`FOR UPDATE OF x` : sql.empty}`);
  return row;
}

/** Every object of the organization (the export). */
export async function objectsOfOrganization<R extends ObjectRow>(q: Queryable, source: ObjectSource, organizationId: number): Promise<R[]> {
  return listObjects<R>(q, source, { organizationId, locationIds: null });
}

/** A unique rule's refusal as the field it is about (422), or the error as it was. */
export function uniqueRefusal(err: unknown, fields: Readonly<Record<string, string>>): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e.code !== '23505') return err;
  const field = Object.entries(fields).find(([constraint]) => e.constraint === constraint)?.[1];
  return field === undefined ? err : invalid(field, 'is taken by another object');
}

const valuesOf = (columns: Columns) =>
  Object.entries(columns).map(([name, c]) => [sql.raw(name), c.cast === undefined ? sql`${c.value}` : sql`${c.value}::${sql.raw(c.cast)}`] as const);

/** Inserts an object of administration: with the id the body gives (422 if taken), else the
 * service's (the larger of the sequence's and the table's highest plus one: the file names its own ids). */
export async function insertObject(q: Queryable, source: ObjectSource, id: number | undefined, columns: Columns, now: Date, managed = true): Promise<number> {
  const values = valuesOf(columns);
  const names = sql.join([...values.map(([n]) => n), ...(managed ? [sql.raw('managed_by')] : []), sql.raw('created_at'), sql.raw('updated_at')]);
  const given = sql.join([...values.map(([, v]) => v), ...(managed ? [sql`'admin'`] : []), sql`${now}`, sql`${now}`]);
  const table = sql.raw(source.table);
  for (let attempt = 0; attempt < 20; attempt++) {
    const newId = id === undefined ? sql`greatest(nextval(${source.sequence}), (SELECT coalesce(max(id), 0) + 1 FROM ${table}))` : sql`${id}::int`;
    const [row] = await q.run<{ id: number }>(sql`INSERT INTO ${table} (id, ${names}) SELECT ${newId}, ${given} ON CONFLICT (id) DO NOTHING RETURNING id`);
    if (row !== undefined) return row.id;
    if (id !== undefined) throw invalid('id', `${id} is taken`);
  }
  throw new AppError(503, 'unavailable', 'no free id was found; try again');
}

/** Writes an object's columns and increases its version. */
export async function updateObject(q: Queryable, source: ObjectSource, id: number, columns: Columns, now: Date): Promise<void> {
  const sets = valuesOf(columns).map(([n, v]) => sql`${n} = ${v}`);
  const version = sql.raw(source.versionColumn);
  await q.run(sql`UPDATE ${sql.raw(source.table)} SET ${sql.join(sets)}, ${version} = ${version} + 1, updated_at = ${now} WHERE id = ${id}`);
}

/** Runs a delete; history that refers to the object (a foreign key) makes it 409 in_use. */
export async function deleteUnlessUsed(q: Queryable, what: string, statements: readonly Sql[]): Promise<void> {
  try {
    for (const statement of statements) await q.run(statement);
  } catch (err) {
    if ((err as { code?: string }).code !== '23503') throw err;
    throw new AppError(409, 'in_use', `${what} has history (requests, orders or devices refer to it): set enabled to false to retire it instead`);
  }
}
