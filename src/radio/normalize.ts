// The "normalize" voice handler: rewrites the text so prices, percentages, symbols and the
// abbreviations of store staff are read as a person would say them. Plain text in, plain text
// out; the synthesizer reads digits well itself ("Aisle 5" needs no help), so numbers stay digits.

interface Currency {
  one: string;
  many: string;
  cent: string;
  cents: string;
}

const CURRENCIES: Record<string, Currency> = {
  $: { one: 'dollar', many: 'dollars', cent: 'cent', cents: 'cents' },
  '€': { one: 'euro', many: 'euros', cent: 'cent', cents: 'cents' },
  '£': { one: 'pound', many: 'pounds', cent: 'penny', cents: 'pence' },
};

// Word abbreviations, read whole-word and case-insensitively, with or without a trailing period.
const ABBREVIATIONS: Record<string, string> = {
  dept: 'department',
  depts: 'departments',
  mgr: 'manager',
  mgrs: 'managers',
  asst: 'assistant',
  supv: 'supervisor',
  cust: 'customer',
  custs: 'customers',
  svc: 'service',
  qty: 'quantity',
  pkg: 'package',
  pkgs: 'packages',
  approx: 'approximately',
  appt: 'appointment',
  asap: 'as soon as possible',
  pls: 'please',
  plz: 'please',
  thx: 'thanks',
  bogo: 'buy one get one',
  rx: 'prescription',
  otc: 'over the counter',
  vs: 'versus',
  etc: 'et cetera',
  pharm: 'pharmacy',
  elec: 'electronics',
  bldg: 'building',
  ctr: 'center',
};

// Abbreviations that mean something only before a number: "Reg 3" is register 3.
const BEFORE_NUMBER: Record<string, string> = {
  reg: 'register',
  ext: 'extension',
  rm: 'room',
  ste: 'suite',
};
// "no 5 dollar bills" is not "number 5": these need their period ("No. 5").
const BEFORE_NUMBER_WITH_PERIOD: Record<string, string> = {
  no: 'number',
  nr: 'number',
};

// Units after a number: [singular, plural].
const UNITS: Record<string, [string, string]> = {
  lb: ['pound', 'pounds'],
  lbs: ['pound', 'pounds'],
  oz: ['ounce', 'ounces'],
  kg: ['kilogram', 'kilograms'],
  ft: ['foot', 'feet'],
  gal: ['gallon', 'gallons'],
  qt: ['quart', 'quarts'],
  doz: ['dozen', 'dozen'],
  ct: ['count', 'count'],
  pk: ['pack', 'pack'],
  ea: ['each', 'each'],
  hr: ['hour', 'hours'],
  hrs: ['hour', 'hours'],
  min: ['minute', 'minutes'],
  mins: ['minute', 'minutes'],
  sec: ['second', 'seconds'],
  secs: ['second', 'seconds'],
};

const AMOUNT = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?![\d.,]*\d)`;

// As a person says a price: "$4.99" is "4 dollars 99" (four dollars ninety-nine), "$4.05" is "4
// dollars and 5 cents", "$0.99" is "99 cents".
function sayAmount(currency: Currency, wholeText: string, fraction: string | undefined): string {
  const whole = Number(wholeText.replace(/,/g, ''));
  const cents = fraction === undefined ? 0 : Number(fraction.padEnd(2, '0'));
  const wholePart = `${whole} ${whole === 1 ? currency.one : currency.many}`;
  const centPart = `${cents} ${cents === 1 ? currency.cent : currency.cents}`;
  if (cents === 0) return wholePart;
  if (whole === 0) return centPart;
  return cents < 10 ? `${wholePart} and ${centPart}` : `${wholePart} ${cents}`;
}

function wordList(words: Iterable<string>): string {
  return [...words].sort((a, b) => b.length - a.length).join('|');
}

const PRICE_BEFORE = new RegExp(String.raw`([$€£])\s?${AMOUNT}`, 'g');
const PRICE_AFTER = new RegExp(String.raw`(?<![\w.])${AMOUNT}\s?([$€£])`, 'g');
// The period of an abbreviation that ends the text also ends the sentence, so it stays.
const ABBREVIATION = new RegExp(String.raw`\b(${wordList(Object.keys(ABBREVIATIONS))})\b(?:\.(?!\s*$))?`, 'gi');
const NUMBERED = new RegExp(String.raw`\b(${wordList(Object.keys(BEFORE_NUMBER))})\.?\s?(?=\d)`, 'gi');
const NUMBERED_WITH_PERIOD = new RegExp(String.raw`\b(${wordList(Object.keys(BEFORE_NUMBER_WITH_PERIOD))})\.\s?(?=\d)`, 'gi');
const UNIT = new RegExp(String.raw`(\d+(?:\.\d+)?)\s?(${wordList(Object.keys(UNITS))})\b\.?`, 'gi');

/** Rewrites text for the speech engine; idempotent on its own output. */
export function normalizeForSpeech(input: string): string {
  let text = input.normalize('NFKC');
  text = text.replace(PRICE_BEFORE, (_m, symbol: string, whole: string, fraction?: string) => sayAmount(CURRENCIES[symbol] ?? CURRENCIES.$!, whole, fraction));
  text = text.replace(PRICE_AFTER, (_m, whole: string, fraction: string | undefined, symbol: string) =>
    sayAmount(CURRENCIES[symbol] ?? CURRENCIES.$!, whole, fraction),
  );
  text = text.replace(/(\d+)\s?¢/g, (_m, n: string) => `${Number(n)} ${Number(n) === 1 ? 'cent' : 'cents'}`);
  text = text.replace(/(\d)\s?%/g, '$1 percent').replace(/%/g, ' percent ');
  text = text.replace(/#\s?(?=\d)/g, 'number ').replace(/#/g, ' ');
  text = text.replace(/\bw\/o\b/gi, 'without').replace(/\bw\/(?=\s|$)/gi, 'with');
  text = text
    .replace(/&/g, ' and ')
    .replace(/@/g, ' at ')
    .replace(/(\d)\s?\+\s?(\d)/g, '$1 plus $2');
  text = text.replace(/~\s?(?=\d)/g, 'about ');
  text = text.replace(UNIT, (_m, n: string, unit: string) => {
    const [one, many] = UNITS[unit.toLowerCase()] ?? [unit, unit];
    return `${n} ${Number(n) === 1 ? one : many}`;
  });
  text = text.replace(NUMBERED, (_m, word: string) => `${BEFORE_NUMBER[word.toLowerCase()] ?? word} `);
  text = text.replace(NUMBERED_WITH_PERIOD, (_m, word: string) => `${BEFORE_NUMBER_WITH_PERIOD[word.toLowerCase()] ?? word} `);
  text = text.replace(ABBREVIATION, (_m, word: string) => ABBREVIATIONS[word.toLowerCase()] ?? word);
  // Symbols the engine would otherwise name ("asterisk", "underscore").
  text = text.replace(/[*_|^`]+/g, ' ');
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.;:!?])/g, '$1')
    .trim();
}
