// What the retention tests share.
import type { Db } from '../../src/db/db.ts';

/** The number of rows of `FROM <sql>` (a table and its WHERE, with $n params). */
export async function countRows(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]?.n ?? 0;
}
