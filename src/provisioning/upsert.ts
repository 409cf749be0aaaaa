// The one statement shape of provisioning: insert an entry if its key is new, else update it only
// where it differs (so applying the same file twice writes nothing and keeps updated_at).
import type { Queryable } from '../db/db.ts';

export interface Column {
  value: unknown;
  /** A cast for the comparison, where PostgreSQL cannot infer the parameter's type (arrays, nulls). */
  cast?: string;
  /** Written on insert only: what the entry starts with, which other operations own afterwards. */
  insertOnly?: boolean;
  /** Updated but not compared (a value whose digest, compared, stands for it). */
  uncompared?: boolean;
}

/** A table whose objects section 18 administers: the file owns what it writes, and a change
 * increases the object's version. */
export interface Owned {
  versionColumn: string;
}

export interface Upserted {
  inserted: boolean;
  /** The row was administration's (managed_by 'admin') and the file took it over. */
  takenOver: boolean;
}

/** Inserts `table`'s row keyed by `key` or updates the columns that differ; stamps created_at/updated_at with `now`. */
export async function upsertByKey(
  q: Queryable,
  table: string,
  key: [string, unknown],
  given: Record<string, Column>,
  now: Date,
  owned?: Owned,
): Promise<Upserted> {
  const columns: Record<string, Column> = owned === undefined ? given : { ...given, managed_by: { value: 'file' } };
  const names = Object.keys(columns);
  const param = (i: number) => `$${i + 2}`;
  const nowParam = `$${names.length + 2}`;
  const updated = names.map((n, i) => [n, i] as const).filter(([n]) => columns[n]?.insertOnly !== true);
  const compared = updated.filter(([n]) => columns[n]?.uncompared !== true);
  const cast = (n: string, i: number) => (columns[n]?.cast === undefined ? param(i) : `${param(i)}::${columns[n]?.cast}`);
  const bump = owned === undefined ? '' : `, ${owned.versionColumn} = ${owned.versionColumn} + 1`;
  const [row] = await q.query<{ inserted: boolean; prior: string | null }>(
    `WITH prior AS (SELECT ${owned === undefined ? 'NULL::text' : 'managed_by'} AS managed_by FROM ${table} WHERE ${key[0]} = $1),
     ins AS (
       INSERT INTO ${table} (${key[0]}, ${names.join(', ')}, created_at, updated_at) VALUES ($1, ${names.map((_, i) => param(i)).join(', ')}, ${nowParam}, ${nowParam})
       ON CONFLICT (${key[0]}) DO NOTHING RETURNING 1
     ), upd AS (
       UPDATE ${table} SET ${updated.map(([n, i]) => `${n} = ${param(i)}`).join(', ')}, updated_at = ${nowParam}${bump}
       WHERE ${key[0]} = $1 AND (${compared.map(([n]) => n).join(', ')}) IS DISTINCT FROM (${compared.map(([n, i]) => cast(n, i)).join(', ')})
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM ins) AS inserted, (SELECT managed_by FROM prior) AS prior, EXISTS (SELECT 1 FROM upd) AS updated`,
    [key[1], ...names.map((n) => columns[n]?.value), now],
  );
  return { inserted: row?.inserted ?? false, takenOver: row?.prior === 'admin' };
}
