// How every engine reads English text: the service, not each engine, decides how prices, times,
// aisle numbers and abbreviations are said, so Festival, Flite and eSpeak NG all say "$4.99" as
// "four dollars ninety-nine" and "aisle 7" as "aisle seven" (each engine has its own, different
// idea of digits). What the engine gets is plain words; the text kept and sent to the device is
// unchanged (the "normalize" voice handler is what rewrites that).
import { normalizeForSpeech } from '../normalize.ts';

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ORDINAL: Record<string, string> = {
  one: 'first',
  two: 'second',
  three: 'third',
  five: 'fifth',
  eight: 'eighth',
  nine: 'ninth',
  twelve: 'twelfth',
};

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const parts: string[] = [];
  if (hundreds > 0) parts.push(`${ONES[hundreds]} hundred`);
  if (rest > 0 || hundreds === 0) {
    if (rest < 20) parts.push(ONES[rest] ?? '');
    else parts.push(TENS[Math.floor(rest / 10)] + (rest % 10 === 0 ? '' : `-${ONES[rest % 10]}`));
  }
  return parts.join(' ');
}

/** A whole number in words (up to 999,999,999; larger ones digit by digit). */
export function numberToWords(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0 || n > 999_999_999)
    return String(n)
      .split('')
      .map((d) => ONES[Number(d)] ?? d)
      .join(' ');
  if (n < 1000) return below1000(n);
  const parts: string[] = [];
  const millions = Math.floor(n / 1_000_000);
  const thousands = Math.floor((n % 1_000_000) / 1000);
  const rest = n % 1000;
  if (millions > 0) parts.push(`${below1000(millions)} million`);
  if (thousands > 0) parts.push(`${below1000(thousands)} thousand`);
  if (rest > 0) parts.push(below1000(rest));
  return parts.join(' ');
}

function ordinalWords(n: number): string {
  const words = numberToWords(n);
  const m = /(\w+)$/.exec(words);
  const last = m?.[1] ?? words;
  const ordinal = ORDINAL[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return words.slice(0, words.length - last.length) + ordinal;
}

function timeWords(h: number, m: number, half: string | undefined): string {
  // "14:00" is said "two p m".
  if (half === undefined && h >= 13 && h <= 23) return timeWords(h - 12, m, 'p');
  const hour = numberToWords(half === undefined ? h : h % 12 === 0 ? 12 : h % 12);
  const minutes = m === 0 ? (half === undefined ? " o'clock" : '') : m < 10 ? ` oh ${ONES[m]}` : ` ${numberToWords(m)}`;
  return `${hour}${minutes}${half === undefined ? '' : ` ${half.toLowerCase()} m`}`;
}

/** "." when a time's closing period (consumed with "p.m.") also ends a sentence: at the end, or before a capital. */
function sentenceEnd(stop: string | undefined, all: string, after: number): string {
  return stop !== undefined && /^(?:\s*$|\s+[A-Z])/.test(all.slice(after)) ? '.' : '';
}

/** English text as every engine is to read it: symbols, abbreviations, times and numbers as words. */
export function readingOf(text: string): string {
  let t = normalizeForSpeech(text);
  // Times: "3:30 pm", "9:05am", "14:00".
  // A period that ends "p.m." or "pm." at the end of a sentence still ends the sentence (its fall in pitch and its pause).
  t = t.replace(
    /\b(\d{1,2}):([0-5]\d)\s*(?:([ap])\.?\s?m\b(\.)?)?/gi,
    (m, h: string, mm: string, half: string | undefined, stop: string | undefined, at: number, all: string) =>
      timeWords(Number(h), Number(mm), half) + sentenceEnd(stop, all, at + m.length),
  );
  t = t.replace(
    /\b(\d{1,2})\s*([ap])\.?m\b(\.)?/gi,
    (m, h: string, half: string, stop: string | undefined, at: number, all: string) => timeWords(Number(h), 0, half) + sentenceEnd(stop, all, at + m.length),
  );
  // Ordinals: "2nd floor".
  t = t.replace(/\b(\d{1,9})(st|nd|rd|th)\b/gi, (_m, n: string) => ordinalWords(Number(n)));
  // Decimals: "2.5 pounds" is "two point five".
  t = t.replace(
    /\b(\d+)\.(\d+)\b/g,
    (_m, whole: string, frac: string) =>
      `${numberToWords(Number(whole))} point ${frac
        .split('')
        .map((d) => ONES[Number(d)])
        .join(' ')}`,
  );
  // Whole numbers, with or without thousands separators: "aisle 7", "1,250".
  t = t.replace(/\b\d{1,3}(?:,\d{3})+\b|\b\d+\b/g, (n) => {
    const digits = n.replace(/,/g, '');
    // A long number (a phone number, a code) is read digit by digit, as people do.
    return digits.length > 9 || (digits.length > 1 && digits.startsWith('0'))
      ? digits
          .split('')
          .map((d) => ONES[Number(d)])
          .join(' ')
      : numberToWords(Number(digits));
  });
  // A colon between two phrases is said as a comma: "Sam is on it, garden center", a short break
  // before the place. (Flite reads "it: garden" with a newline after as two sentences, a full stop
  // and a new start: heard worse, 82.2% of words against 83.3%; see docs/radio.md, "Figures".)
  t = t.replace(/\s*:\s+(?=\S)/g, ', ');
  return t;
}
