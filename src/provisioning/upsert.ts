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

/** Inserts `table`'s row keyed by `key` or updates the columns that differ; stamps created_at/updated_at with `now`. */
export async function upsertByKey(q: Queryable, table: string, key: [string, unknown], columns: Record<string, Column>, now: Date): Promise<void> {
  const names = Object.keys(columns);
  const param = (i: number) => `$${i + 2}`;
  const nowParam = `$${names.length + 2}`;
  const updated = names.map((n, i) => [n, i] as const).filter(([n]) => columns[n]?.insertOnly !== true);
  const compared = updated.filter(([n]) => columns[n]?.uncompared !== true);
  const cast = (n: string, i: number) => (columns[n]?.cast === undefined ? param(i) : `${param(i)}::${columns[n]?.cast}`);
  await q.query(
    `WITH ins AS (
       INSERT INTO ${table} (${key[0]}, ${names.join(', ')}, created_at, updated_at) VALUES ($1, ${names.map((_, i) => param(i)).join(', ')}, ${nowParam}, ${nowParam})
       ON CONFLICT (${key[0]}) DO NOTHING
     )
     UPDATE ${table} SET ${updated.map(([n, i]) => `${n} = ${param(i)}`).join(', ')}, updated_at = ${nowParam}
     WHERE ${key[0]} = $1 AND (${compared.map(([n]) => n).join(', ')}) IS DISTINCT FROM (${compared.map(([n, i]) => cast(n, i)).join(', ')})`,
    [key[1], ...names.map((n) => columns[n]?.value), now],
  );
}
