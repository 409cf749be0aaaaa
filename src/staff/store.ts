// The staff app's own reads: the languages its words follow (the person's, else the store's).
import type { Queryable } from '../db/db.ts';

export type Language = 'en' | 'fr';

/** The person's own language, if they chose one. */
export async function personLanguage(q: Queryable, personId: number): Promise<Language | null> {
  const [row] = await q.query<{ language: Language | null }>('SELECT language FROM people WHERE id = $1', [personId]);
  return row?.language ?? null;
}

/** Each location's language (en when it has none). */
export async function locationLanguages(q: Queryable, locationIds: readonly number[]): Promise<Map<number, Language>> {
  if (locationIds.length === 0) return new Map();
  const rows = await q.query<{ id: number; language: string | null }>('SELECT id, language FROM locations WHERE id = ANY ($1::int[])', [[...locationIds]]);
  return new Map(rows.map((r) => [r.id, r.language === 'fr' ? 'fr' : 'en']));
}
