// What Call for Help tells another feature about a request beyond its events: the option's words in
// the request's location's other language (events carry the English ones). The radio's French
// announcements ask for them through compose(), so no other feature reads CFH's tables.
import type { Queryable } from '../db/db.ts';

export interface OptionWords {
  text: string | null;
  prompt: string | null;
}

/** The French text and prompt of the request's option (nulls for an unknown request). */
export async function frenchOptionWords(q: Queryable, requestId: number): Promise<OptionWords> {
  const [row] = await q.query<{ text_fr: string | null; prompt_fr: string | null }>(
    'SELECT o.text_fr, o.prompt_fr FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id WHERE r.id = $1',
    [requestId],
  );
  return { text: row?.text_fr ?? null, prompt: row?.prompt_fr ?? null };
}
