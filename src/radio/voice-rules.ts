// What staff say on the radio, read by deterministic rules (contract section 12): "I'm on it" and
// its variations claim a request, "on my way" and its variations mark it on the way, anything
// else (a question, a refusal, someone else's name) does nothing. What the phrase names beyond
// the intent ("paint counter", "aisle seven") picks the request. Pure functions.
import { parseJsonObject } from '../devices/wire.ts';

export type Intent = 'claim' | 'on_the_way' | 'none';

export interface ReadPhrase {
  intent: Intent;
  /** The words of the phrase beyond the intent and filler: what it names, normalized ("" when nothing). */
  named: string;
}

const NUMBER_WORDS: Record<string, string> = {
  zero: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  ten: '10',
  eleven: '11',
  twelve: '12',
  thirteen: '13',
  fourteen: '14',
  fifteen: '15',
  sixteen: '16',
  seventeen: '17',
  eighteen: '18',
  nineteen: '19',
  twenty: '20',
  thirty: '30',
  forty: '40',
  fifty: '50',
};

const CONTRACTIONS: [RegExp, string][] = [
  [/\bi'm\b/g, 'i am'],
  [/\bim\b/g, 'i am'],
  [/\bi've\b/g, 'i have'],
  [/\bive\b/g, 'i have'],
  [/\bi'll\b/g, 'i will'],
  [/\bill\b/g, 'i will'],
  [/\bi'd\b/g, 'i would'],
  [/\bwe're\b/g, 'we are'],
  [/\bwe'll\b/g, 'we will'],
  [/\bwe've\b/g, 'we have'],
  [/\bcan't\b/g, 'can not'],
  [/\bcannot\b/g, 'can not'],
  [/\bwon't\b/g, 'will not'],
  [/\bdon't\b/g, 'do not'],
  [/\bisn't\b/g, 'is not'],
  [/\baren't\b/g, 'are not'],
  [/\bain't\b/g, 'am not'],
  [/\bgotta\b/g, 'got to'],
  [/\bgonna\b/g, 'going to'],
  [/\bomw\b/g, 'on my way'],
  [/\blemme\b/g, 'let me'],
  [/\b(\w+)'s\b/g, '$1 is'],
];

/** Lower case, straight apostrophes, contractions expanded, number words as digits, no punctuation. */
export function normalizePhrase(text: string): string {
  let t = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`]/g, "'");
  for (const [pattern, replacement] of CONTRACTIONS) t = t.replace(pattern, replacement);
  t = t.replace(/[^a-z0-9' ]+/g, ' ').replace(/'/g, '');
  // "the one in aisle 7" is no number one.
  t = t.replace(/\b(the|that|this) one\b/g, '$1');
  // "twenty one" -> "21"
  t = t.replace(/\b(twenty|thirty|forty|fifty) (one|two|three|four|five|six|seven|eight|nine)\b/g, (_m, tens: string, unit: string) =>
    String(Number(NUMBER_WORDS[tens]) + Number(NUMBER_WORDS[unit])),
  );
  t = t.replace(/\b[a-z]+\b/g, (w) => NUMBER_WORDS[w] ?? w);
  return t.replace(/\s+/g, ' ').trim();
}

// Questions and asking others: "is anyone on it?", "who's got it", "can someone take it".
const QUESTION = /^(is|are|who|what|where|when|why|how|does|do|did|can|could|would|should|will|anyone|anybody|somebody|someone|has|have)\b/;
// Refusals: "not me", "I can't get it", "I'm not on it", "nope", "I'm busy".
const REFUSAL = /\b(not|no|nope|never|nah|busy|unable|negative|cancel|later)\b/;
// Someone else: "he's on it", "she got it", "they are heading over", "Sam's on it" (said by another).
const THIRD_PERSON = /^(he|she|they|it|that|this|you|somebody|someone|anyone|everyone|nobody)\b/;

// Each pattern is the whole intent phrase; what follows or precedes it may name the request.
const ON_THE_WAY: RegExp[] = [
  /\b(i am |we are )?on (my|our|the) way\b/,
  /\b(i am |we are )?(heading|headed|walking|going|running|coming) (over|there|that way|now|right now|to|down|up|back)\b/,
  /\b(i am |we are )?(heading|headed|coming|walking)\b/,
  /\b(i will |i can |we will )?be (right )?(there|over)\b/,
  /\b(i will |i am )?(go|going) (there|over)\b/,
  /\ben route\b/,
  /\b(i am )?almost there\b/,
];

const CLAIM: RegExp[] = [
  /\b(i will|i can|we will|we can|let me) (take|get|grab|handle|cover|do|help|check|look after|deal with|see to)( (it|that|this|them|her|him|out|the customer))?\b/,
  /\b(i am |we are )?on (it|that|this|this one|that one)\b/,
  /\b(i have |i |we have |we )?(got|get|grab|take|taking|grabbing|getting|handle|handling|cover|covering|claim|claiming) (it|that|this|this one|that one|them|her|him|care of it|that one)\b/,
  /\b(i have|i) got (it|this|that)\b/,
  /\bi (will|can) do (it|that)\b/,
  /\b(leave it|leave that) (to|with) me\b/,
  /\b(mine|claimed|copy that i will take it)\b/,
  /\bi am (on|taking|getting|helping|handling) (it|that|this|them|her|him|the customer)\b/,
  /\bi am helping\b/,
  /^(i got|got it|on it|taking it|copy i got it)$/,
  // "I got the paint counter": what follows names the request.
  /^(i have |i )?got\b/,
];

const FILLER = new Set([
  'the',
  'a',
  'an',
  'at',
  'to',
  'for',
  'in',
  'over',
  'now',
  'right',
  'please',
  'it',
  'that',
  'this',
  'one',
  'customer',
  'yeah',
  'yes',
  'yep',
  'ok',
  'okay',
  'sure',
  'copy',
  'roger',
  'and',
  'i',
  'am',
  'will',
  'be',
  'there',
  'by',
  'of',
  'with',
  'from',
  'just',
  'so',
  'hey',
  'alright',
  'all',
  'thanks',
  'thank',
  'you',
  'in',
  'minute',
  'sec',
  'second',
  'coming',
  'up',
  'front',
  'store',
  'request',
  'call',
  'help',
  'helping',
]);

function rest(normalized: string, match: RegExpExecArray): string {
  const left = normalized.slice(0, match.index) + ' ' + normalized.slice(match.index + match[0].length);
  return left
    .split(' ')
    .filter((w) => w !== '' && !FILLER.has(w))
    .join(' ');
}

/** What the phrase asks, and what it names. */
export function readPhrase(text: string): ReadPhrase {
  if (/\?/.test(text)) return { intent: 'none', named: '' };
  const t = normalizePhrase(text);
  if (t === '' || QUESTION.test(t) || REFUSAL.test(t) || THIRD_PERSON.test(t)) return { intent: 'none', named: '' };
  for (const [intent, patterns] of [
    ['on_the_way', ON_THE_WAY],
    ['claim', CLAIM],
  ] as const) {
    for (const pattern of patterns) {
      const m = pattern.exec(t);
      if (m !== null) return { intent, named: rest(t, m) };
    }
  }
  return { intent: 'none', named: '' };
}

/** The names a request goes by, normalized as phrases are (button or display name, option text). */
export const nameKey = (name: string) =>
  normalizePhrase(name)
    .split(' ')
    .filter((w) => !FILLER.has(w))
    .join(' ');

/**
 * Whether what the phrase names is this name: every word of the name is in the phrase ("paint
 * counter" in "paint counter please"), or every word of the phrase in the name ("paint" for "Paint
 * counter"), numbers included ("aisle 7" is "aisle seven").
 */
export function namesMatch(named: string, name: string): boolean {
  const a = named.split(' ').filter(Boolean);
  const b = nameKey(name).split(' ').filter(Boolean);
  if (a.length === 0 || b.length === 0) return false;
  return b.every((w) => a.includes(w)) || a.every((w) => b.includes(w));
}

/** Longest heard text acted on (contract section 12); longer ones are recorded, cut, without effect. */
export const MAX_HEARD_TEXT = 2_000;

export interface HeardMessage {
  heardId: string;
  text: string;
  speaker: string | null;
  heardAt: Date | null;
  /** Why it is recorded without effect (too long, no text). */
  problem: 'too_long' | 'no_text' | null;
}

const cleanText = (s: string) => s.replace(/[\u0000-\u001F\u007F]/g, ' ').replace(/[\uD800-\uDFFF]/g, '\uFFFD');

/**
 * A message on radio/<edge_id>/heard: JSON `{ heard_id, text, speaker?, heard_at }`. Null when it
 * cannot be recorded at all (not JSON, no usable heard_id); otherwise what to record.
 */
export function parseHeard(payload: Buffer | string): HeardMessage | null {
  const b = parseJsonObject(payload);
  if (b === null) return null;
  const rawId = typeof b.heard_id === 'number' && Number.isSafeInteger(b.heard_id) ? String(b.heard_id) : b.heard_id;
  if (typeof rawId !== 'string' || rawId.trim() === '' || rawId.length > 200) return null;
  const speaker = typeof b.speaker === 'string' && b.speaker.trim() !== '' ? cleanText(b.speaker).trim().slice(0, 100) : null;
  const at = typeof b.heard_at === 'string' ? new Date(b.heard_at) : null;
  const heardAt = at !== null && Number.isFinite(at.getTime()) && /^\d{4}-/.test(String(b.heard_at)) ? at : null;
  if (typeof b.text !== 'string' || b.text.trim() === '') return { heardId: cleanText(rawId), text: '', speaker, heardAt, problem: 'no_text' };
  const text = cleanText(b.text);
  if (text.length > MAX_HEARD_TEXT) return { heardId: cleanText(rawId), text: text.slice(0, MAX_HEARD_TEXT), speaker, heardAt, problem: 'too_long' };
  return { heardId: cleanText(rawId), text, speaker, heardAt, problem: null };
}

/** An open request as a voice action sees it. */
export interface Candidate {
  status: string;
  name: string | null;
  option_text: string | null;
  claimed_by: string | null;
}

const UNCLAIMED = new Set(['created', 'escalated', 'reminder']);

/**
 * The request a phrase applies to, among the location's open ones oldest first: those the phrase
 * names (button or display name, else the option's text), else all; of them, for a claim the
 * oldest unclaimed one; for "on my way" the oldest one the speaker claimed and is not on the way
 * to yet, else the oldest unclaimed one. Null: nothing is waiting (for what it names).
 */
export function chooseRequest<T extends Candidate>(open: readonly T[], read: ReadPhrase, speaker: string | null): T | null {
  const named = read.named === '' ? open : open.filter((r) => [r.name, r.option_text].some((n) => n !== null && namesMatch(read.named, n)));
  const unclaimed = named.find((r) => UNCLAIMED.has(r.status)) ?? null;
  if (read.intent === 'claim') return unclaimed;
  if (read.intent !== 'on_the_way') return null;
  const mine = speaker === null ? undefined : named.find((r) => r.status === 'claimed' && (r.claimed_by ?? '').toLowerCase() === speaker.toLowerCase());
  return mine ?? unclaimed;
}
