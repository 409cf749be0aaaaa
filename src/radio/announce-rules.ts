// What the radio says about a Call for Help request (contract section 12): pure functions.

export type Language = 'en' | 'fr';

/** How long a request's statuses are gathered before one announcement says the latest. */
export const ANNOUNCE_COALESCE_SECONDS = 3;

export const languageOf = (value: string | null | undefined): Language => (value === 'fr' ? 'fr' : 'en');

/** What the announcement is about: the button's or display's name, the option's text and prompt. */
export interface AnnouncedRequest {
  status: string;
  /** The call button's or display's name (null for a request from the API). */
  name: string | null;
  optionText: string | null;
  optionPrompt: string | null;
  claimedBy: string | null;
}

const LEADS: Record<Language, Record<string, (by: string) => string>> = {
  en: {
    created: () => 'Customer needs help',
    escalated: () => 'Customer still waiting for help',
    reminder: () => 'Reminder, customer waiting',
    claimed: (by) => `${by} is on it`,
    on_the_way: (by) => `${by} is on the way`,
    completed: () => 'Customer helped',
    cancelled: () => 'Request cancelled',
    timed_out: () => 'Nobody answered',
  },
  fr: {
    created: () => "Un client a besoin d'aide",
    escalated: () => "Un client attend toujours de l'aide",
    reminder: () => 'Rappel, un client attend',
    claimed: (by) => `${by} s'en occupe`,
    on_the_way: (by) => `${by} est en route`,
    completed: () => 'Client aidé',
    cancelled: () => 'Demande annulée',
    timed_out: () => "Personne n'a répondu",
  },
};

/**
 * Statuses that only say the request still waits, by how much they say. One announcement is pending
 * per request and a later status takes its place, except one of these saying less than the pending
 * one: a reminder falling in the escalation's instant (reminder 60 s, escalation 120 s) must not
 * silence the escalation. Other statuses (claimed, cancelled, ...) move the request on and replace.
 */
export const WAITING_RANK: Readonly<Record<string, number>> = { reminder: 0, created: 1, escalated: 2 };

/** Whether a later status `next` takes the place of the pending announcement of `pending`. */
export function replacesPending(pending: string, next: string): boolean {
  const was = WAITING_RANK[pending];
  const now = WAITING_RANK[next];
  return was === undefined || now === undefined || now >= was;
}

/** Statuses that interrupt: sent before normal messages. */
export const isUrgent = (status: string) => status === 'escalated';

const clean = (s: string | null) => (s ?? '').replace(/\s+/g, ' ').trim();

/**
 * "Customer needs help: Paint counter. Need a hand with paint": the lead of the status, then where
 * (the button's or display's name, else the option's text), then the option's prompt when it adds
 * something. Null for a status the radio has no words for.
 */
export function announcementText(r: AnnouncedRequest, language: Language): string | null {
  const lead = LEADS[language][r.status];
  if (lead === undefined) return null;
  const by = clean(r.claimedBy) || (language === 'fr' ? 'Quelqu’un' : 'Someone');
  const where = clean(r.name) || clean(r.optionText);
  const prompt = clean(r.optionPrompt);
  let text = lead(by);
  if (where !== '') text += `: ${where}`;
  if (prompt !== '' && prompt.toLowerCase() !== where.toLowerCase()) text += `. ${prompt}`;
  return text.slice(0, 480);
}

/** The longest place an answer repeats: a button's or display's name is at most this long, so a
 * place heard in a phrase is cut there (repeating more would only keep the speech engine busy). */
export const REPEATED_PLACE_MAX = 200;

/** What the radio answers a voice action that did not claim anything. */
export function voiceReply(kind: 'nothing_waiting' | 'taken', language: Language, place: string): string {
  const where = Array.from(clean(place)).slice(0, REPEATED_PLACE_MAX).join('');
  if (kind === 'nothing_waiting') {
    const lead = language === 'fr' ? "Rien n'attend" : 'Nothing is waiting';
    return where === '' ? lead : `${lead}: ${where}`;
  }
  const lead = language === 'fr' ? 'Déjà pris' : 'Already taken';
  return where === '' ? lead : `${lead}: ${where}`;
}
