// The customer pages (contract section 9), plain server-rendered HTML with a little script:
// GET /help/{display_key} (the display's options, and a free text when allowed) and GET
// /help/t/{message_id} (the request's state, live from C6, with a cancel button). English or
// French. Every stored text is escaped; the page's script is a file of web/ (display.js,
// tracking.js, served by page-routes.ts), and its data goes in as JSON that cannot close its
// <script> element.
import type { DisplayOption, DisplayRow } from './display-store.ts';
import { CUSTOM_TEXT_MAX } from './displays.ts';
import type { CfhStatusView } from './schemas.ts';

export type Language = 'en' | 'fr';

const TEXT = {
  en: {
    title: 'Call for help',
    choose: 'How can we help you?',
    other: 'Something else',
    send: 'Send',
    sending: 'Sending…',
    wait: 'Please wait a moment before asking again.',
    refused: 'Sorry, this text cannot be sent.',
    failed: 'Something went wrong. Please try again.',
    tracking: 'Your request',
    received: 'Your request was received. Someone will be with you shortly.',
    escalated: 'Your request was received. We are finding someone to help you.',
    claimed: '{name} is taking care of your request.',
    on_the_way: '{name} is on the way.',
    completed: 'Your request is complete. Thank you!',
    cancelled: 'Your request was cancelled.',
    timed_out: 'Sorry, nobody was available. Please ask at a counter.',
    cancel: 'Cancel my request',
    associate: 'An associate',
    notFound: 'This page does not exist.',
    other_language: 'Français',
  },
  fr: {
    title: "Demande d'aide",
    choose: 'Comment pouvons-nous vous aider ?',
    other: 'Autre chose',
    send: 'Envoyer',
    sending: 'Envoi…',
    wait: 'Veuillez patienter un moment avant de redemander.',
    refused: 'Désolé, ce texte ne peut pas être envoyé.',
    failed: 'Un problème est survenu. Veuillez réessayer.',
    tracking: 'Votre demande',
    received: "Votre demande a été reçue. Quelqu'un arrive bientôt.",
    escalated: "Votre demande a été reçue. Nous cherchons quelqu'un pour vous aider.",
    claimed: "{name} s'occupe de votre demande.",
    on_the_way: '{name} est en route.',
    completed: 'Votre demande est terminée. Merci !',
    cancelled: 'Votre demande a été annulée.',
    timed_out: "Désolé, personne n'était disponible. Veuillez vous adresser à un comptoir.",
    cancel: 'Annuler ma demande',
    associate: 'Un(e) associé(e)',
    notFound: "Cette page n'existe pas.",
    other_language: 'English',
  },
} as const;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** JSON for a script element: `<`, `>`, `&` and line separators escaped, so no text can end the script. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;padding:1.25rem;max-width:32rem;margin-inline:auto;line-height:1.4;color:#1b1b1b}
h1{font-size:1.4rem}button{display:block;width:100%;font-size:1.15rem;padding:1rem;margin:.6rem 0;border-radius:.6rem;border:1px solid #0b5cad;background:#0b5cad;color:#fff}
button.secondary{background:#fff;color:#0b5cad}textarea{width:100%;box-sizing:border-box;font-size:1rem;padding:.6rem;border-radius:.4rem}
nav.lang{text-align:right;margin-bottom:-.5rem}nav.lang a{display:inline-block;padding:.5rem .75rem;font-size:1rem;color:#0b5cad}
#state{font-size:1.2rem;padding:1rem;border-radius:.6rem;background:#eef4fb}#error{color:#a40000}[hidden]{display:none}`;

/**
 * The language of a page: `?lang=` when asked, else the first of English and French the browser's
 * Accept-Language prefers (fr-CA is French), else the location's.
 */
export function pageLanguage(asked: string | undefined, acceptLanguage: string | undefined, location: Language): Language {
  if (asked === 'en' || asked === 'fr') return asked;
  const preferred = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined) ?? 1);
      return { lang: tag.trim().toLowerCase().split('-')[0], q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((p) => p.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  const found = preferred.find((p) => p.lang === 'en' || p.lang === 'fr');
  return (found?.lang as Language | undefined) ?? location;
}

/** The one-tap switch to the other language: the same page with ?lang= (the choice then sticks in its links). */
function languageSwitch(lang: Language): string {
  const other: Language = lang === 'fr' ? 'en' : 'fr';
  return `<nav class="lang"><a href="?lang=${other}" lang="${other}" hreflang="${other}">${TEXT[lang].other_language}</a></nav>`;
}

/** Where page-routes.ts serves the pages' scripts (src/cfh/web). */
export const PAGE_SCRIPTS_PATH = '/help-assets/';

/** A page's script: its file under web/, and the data it reads from #page-data. */
interface PageScript {
  file: 'display.js' | 'tracking.js';
  data: Record<string, unknown>;
}

function page(lang: Language, title: string, nonce: string, body: string, script: PageScript | null): string {
  const scripts =
    script === null
      ? ''
      : `<script type="application/json" id="page-data">${scriptJson(script.data)}</script><script nonce="${nonce}" src="${PAGE_SCRIPTS_PATH}${script.file}"></script>`;
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}${scripts}</body></html>`;
}

/** The display's page: its options, and the free text when it allows one. */
export function displayPageHtml(lang: Language, nonce: string, key: string, display: DisplayRow, options: DisplayOption[]): string {
  const t = TEXT[lang];
  const buttons = options.map((o) => `<button type="button" data-option="${o.id}">${escapeHtml(lang === 'fr' ? o.text_fr : o.text_en)}</button>`).join('\n');
  const free = display.allow_custom_text
    ? `<form id="free"><label for="text">${escapeHtml(t.other)}</label><textarea id="text" name="custom_text" maxlength="${CUSTOM_TEXT_MAX}" rows="3"></textarea>
<button type="submit" class="secondary">${escapeHtml(t.send)}</button></form>`
    : '';
  // The store's name: the display's own name is for staff (the radio and the console say it).
  const body = `${languageSwitch(lang)}<h1>${escapeHtml(display.store_name)}</h1><p>${escapeHtml(t.choose)}</p>${buttons}${free}<p id="error" role="alert" hidden></p>`;
  const script: PageScript = { file: 'display.js', data: { key, texts: { wait: t.wait, refused: t.refused, failed: t.failed, sending: t.sending }, lang } };
  return page(lang, display.store_name, nonce, body, script);
}

/** The sentence of a status, with the claimer's name as the customer sees it. */
export function statusSentence(lang: Language, view: CfhStatusView): string {
  const t = TEXT[lang];
  const r = view.cfh_request;
  const name = r.claimed_by === 'An associate' ? t.associate : (r.claimed_by ?? t.associate);
  switch (r.status) {
    case 'created':
      return t.received;
    case 'escalated':
      return t.escalated;
    case 'claimed':
      return t.claimed.replace('{name}', name);
    case 'on_the_way':
      return t.on_the_way.replace('{name}', name);
    case 'completed':
      return t.completed;
    case 'cancelled':
      return t.cancelled;
    case 'timed_out':
      return t.timed_out;
  }
}

/** The tracking page: the state now, kept live by C6 (EventSource), and a cancel button while open. */
export function trackingPageHtml(lang: Language, nonce: string, view: CfhStatusView, optionText: string, storeName: string): string {
  const t = TEXT[lang];
  const open = !view.cfh_request.is_closed;
  const body = `${languageSwitch(lang)}<h1>${escapeHtml(storeName)}</h1><h2>${escapeHtml(t.tracking)}</h2><p>${escapeHtml(optionText)}</p>
<p id="state" role="status" aria-live="polite" data-status="${view.cfh_request.status}">${escapeHtml(statusSentence(lang, view))}</p>
<button type="button" id="cancel" class="secondary"${open ? '' : ' hidden'}>${escapeHtml(t.cancel)}</button><p id="error" role="alert" hidden></p>`;
  const texts = Object.fromEntries(
    ['received', 'escalated', 'claimed', 'on_the_way', 'completed', 'cancelled', 'timed_out', 'associate', 'failed'].map((k) => [k, t[k as keyof typeof t]]),
  );
  const script: PageScript = { file: 'tracking.js', data: { messageId: view.message_id, texts } };
  return page(lang, t.title, nonce, body, script);
}

export function notFoundPageHtml(lang: Language, nonce: string): string {
  return page(lang, TEXT[lang].title, nonce, `<h1>${escapeHtml(TEXT[lang].notFound)}</h1>`, null);
}
