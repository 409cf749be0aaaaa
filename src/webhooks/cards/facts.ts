// What a chat card says (section 20), the same for Slack and Teams, in the store's language (en,
// fr): a headline saying what changed, the option, the place (button or display), the waiting time,
// the status, who has it, the customer's text, and the link that opens the request in the staff
// app. Plain text here: each platform's formatter escapes it for its own markup.
import type { DeliveredEvent, Formattable } from '../formats.ts';

/** The request's own facts, read with the delivery (the event carries the rest). */
export interface RequestFacts {
  created_at: string;
  custom_text: string | null;
  option_text_en: string | null;
  option_text_fr: string | null;
}

export type Language = 'en' | 'fr';

export interface Fact {
  title: string;
  value: string;
}

export interface CardFacts {
  language: Language;
  /** What changed, e.g. "Sam has it: Paint counter". */
  headline: string;
  facts: Fact[];
  /** The customer's own words, when they typed some. */
  customerText: string | null;
  customerTextTitle: string;
  /** The store, as the context line says it. */
  store: string | null;
  /** The staff app's page of the request, and the button's words; null: no request to open. */
  link: { url: string; title: string } | null;
  /** The whole message as one line of plain text (notifications, and clients without blocks). */
  summary: string;
}

const TEXT = {
  en: {
    option: 'Option',
    place: 'Place',
    waiting: 'Waiting time',
    status: 'Status',
    who: 'Who has it',
    customer: "Customer's text",
    open: 'Open in the staff app',
    nobody: 'Nobody yet',
    button: 'button',
    display: 'display',
    test: 'Test message from storeops: requests will look like this',
    statuses: {
      created: 'Waiting',
      escalated: 'Escalated',
      reminder: 'Still waiting',
      claimed: 'Claimed',
      on_the_way: 'On the way',
      arrived: 'Arrived',
      completed: 'Completed',
      timed_out: 'Timed out',
      cancelled: 'Cancelled',
      test: 'Test',
    } as Record<string, string>,
    headline: (status: string, option: string, who: string | null, reminder: number | null): string => {
      const someone = who ?? 'Someone';
      switch (status) {
        case 'created':
          return `New request: ${option}`;
        case 'escalated':
          return `Escalated, still waiting: ${option}`;
        case 'reminder':
          return `Reminder${reminder === null ? '' : ` ${reminder}`}: ${option} is still waiting`;
        case 'claimed':
          return `${someone} has it: ${option}`;
        case 'on_the_way':
          return `${someone} is on the way: ${option}`;
        case 'arrived':
          return `${someone} has arrived: ${option}`;
        case 'completed':
          return `Completed${who === null ? '' : ` by ${who}`}: ${option}`;
        case 'timed_out':
          return `Nobody answered in time: ${option}`;
        case 'cancelled':
          return `Cancelled by the customer: ${option}`;
        default:
          return `${status}: ${option}`;
      }
    },
  },
  fr: {
    option: 'Option',
    place: 'Emplacement',
    waiting: "Temps d'attente",
    status: 'Statut',
    who: "Qui s'en occupe",
    customer: 'Texte du client',
    open: "Ouvrir dans l'app du personnel",
    nobody: 'Personne pour le moment',
    button: 'bouton',
    display: 'affichette',
    test: 'Message de test de storeops : les demandes ressembleront à ceci',
    statuses: {
      created: 'En attente',
      escalated: 'Escaladée',
      reminder: 'Toujours en attente',
      claimed: 'Prise en charge',
      on_the_way: 'En route',
      arrived: 'Arrivé',
      completed: 'Terminée',
      timed_out: 'Expirée',
      cancelled: 'Annulée',
      test: 'Test',
    } as Record<string, string>,
    headline: (status: string, option: string, who: string | null, reminder: number | null): string => {
      const someone = who ?? "Quelqu'un";
      switch (status) {
        case 'created':
          return `Nouvelle demande : ${option}`;
        case 'escalated':
          return `Escaladée, toujours en attente : ${option}`;
        case 'reminder':
          return `Rappel${reminder === null ? '' : ` ${reminder}`} : ${option} attend toujours`;
        case 'claimed':
          return `${someone} s'en occupe : ${option}`;
        case 'on_the_way':
          return `${someone} est en route : ${option}`;
        case 'arrived':
          return `${someone} est arrivé : ${option}`;
        case 'completed':
          return `Terminée${who === null ? '' : ` par ${who}`} : ${option}`;
        case 'timed_out':
          return `Personne n'a répondu à temps : ${option}`;
        case 'cancelled':
          return `Annulée par le client : ${option}`;
        default:
          return `${status} : ${option}`;
      }
    },
  },
};

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/** "45 s", "3 min", "1 h 05 min" (the same in both languages). */
export function waitingTime(fromIso: string, toIso: string): string | null {
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return null;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** The staff app's page of a request (section 19). */
export const staffLink = (publicBaseUrl: string, messageId: string): string => `${publicBaseUrl}/staff/r/${encodeURIComponent(messageId)}`;

/** What a card of this delivery says. Events other than Call for Help are one line: their message. */
export function cardFacts(d: Formattable, publicBaseUrl: string): CardFacts {
  const language: Language = d.language === 'fr' ? 'fr' : 'en';
  const t = TEXT[language];
  const store = [d.location_name, d.store_number].filter((s) => s !== null && s !== '').join(' · ') || null;
  if (d.event.type !== 'callforhelp') return otherEvent(d.event, store, language);
  const details = d.event.details;
  const test = d.event.status === 'test';
  const option =
    (language === 'fr' ? str(d.request?.option_text_fr) : str(d.request?.option_text_en)) ?? str(details.option_text) ?? str(details.option_prompt) ?? '?';
  const who = str(details.claimed_by);
  const reminder = typeof details.reminder_count === 'number' ? details.reminder_count : null;
  const placeName = str(details.name);
  const kind = details.type === 'call_button' ? t.button : details.type === 'display' ? t.display : null;
  const facts: Fact[] = [{ title: t.option, value: option }];
  if (placeName !== null) facts.push({ title: t.place, value: kind === null ? placeName : `${placeName} (${kind})` });
  const waited = d.request === null ? null : waitingTime(d.request.created_at, d.event.created_at);
  if (waited !== null) facts.push({ title: t.waiting, value: waited });
  facts.push({ title: t.status, value: t.statuses[d.event.status] ?? d.event.status });
  facts.push({ title: t.who, value: who ?? t.nobody });
  const messageId = str(details.message_id);
  const headline = test ? t.test : t.headline(d.event.status, option, who, reminder);
  const customerText = str(d.request?.custom_text);
  return {
    language,
    headline,
    facts,
    customerText,
    customerTextTitle: t.customer,
    store,
    link: messageId === null ? null : { url: test ? `${publicBaseUrl}/staff` : staffLink(publicBaseUrl, messageId), title: t.open },
    summary: [headline, store].filter((s) => s !== null).join(' · '),
  };
}

function otherEvent(event: DeliveredEvent, store: string | null, language: Language): CardFacts {
  const headline = str(event.message) ?? `${event.type}: ${event.status}`;
  return {
    language,
    headline,
    facts: [],
    customerText: null,
    customerTextTitle: TEXT[language].customer,
    store,
    link: null,
    summary: [headline, store].filter((s) => s !== null).join(' · '),
  };
}
