// The profanity filter of a customer's free text (C9): English and French word lists, matched as
// whole words so "Scunthorpe" is not refused, over the text as a reader sees it. A word list matches
// letters, so what renders as the same word is folded first: fullwidth and other compatibility forms
// (NFKC), invisible format characters (zero-width spaces and joiners), look-alike Cyrillic and Greek
// letters, accents, digits and signs written for letters, and letters repeated for emphasis.
import { Profanity } from '@2toad/profanity';

const profanity = new Profanity({ languages: ['en', 'fr'], wholeWord: true, unicodeWordBoundaries: true });

/** Letters of other scripts drawn like Latin ones (lower case; Unicode's confusables, the common ones). */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/** Digits and signs written for letters ("m3rde", "sh1t", "@ss"). */
const LEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's', '!': 'i' };

/** The text as its letters read: compatibility forms, format characters, look-alikes, accents. */
function folded(text: string): string {
  const plain = text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .toLowerCase();
  return [...plain]
    .map((c) => LOOK_ALIKES[c] ?? c)
    .join('')
    .normalize('NFD')
    .replace(/\p{M}/gu, '');
}

/** Whether the profanity filter flags a text, however its words are disguised. */
export function isProfane(text: string): boolean {
  const letters = folded(text);
  const leet = letters.replace(/[013457@$!]/g, (c) => LEET[c] ?? c);
  const candidates = new Set([text, letters, leet]);
  // "fuuuck": each run of one letter read once, beside the text as written ("asshole" keeps its two).
  for (const c of [...candidates]) candidates.add(c.replace(/(\p{L})\1+/gu, '$1'));
  return [...candidates].some((c) => profanity.exists(c));
}
