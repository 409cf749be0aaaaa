// How the radio benchmark (radio-speech.ts) counts the words of an announcement that the recognizer
// heard. Strict: a word of the text (as the engines read it) is heard when the recognizer wrote the
// same word, each at most once. Spelling-neutral: also when the recognizer wrote the same sounds
// with its dictionary's other spelling of them: "p m" written "pm", "cleanup" written "clean up",
// "lumber yard" written "lumberyard" (one word for two, or two for one, letters identical). No
// homophones ("two" written "to"), no near misses: only spellings a listener could not tell apart.

/** The words of a text or of a recognizer's hypothesis: lower case, letters and apostrophes, hyphens split. */
export const words = (text: string): string[] =>
  text
    .toLowerCase()
    .replace(/[^a-z' -]+/g, ' ')
    .replace(/-/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

export interface WordScore {
  /** Words of the text heard as the same word. */
  heard: number;
  /** `heard` plus the words heard written another way (the same letters, joined or split). */
  spellingNeutral: number;
  /** Words of the text. */
  total: number;
  /** Words of the text not heard either way. */
  missed: string[];
}

export function scoreWords(expected: readonly string[], hypothesis: readonly string[]): WordScore {
  // Positions in the hypothesis not yet matched to a word of the text.
  const free = hypothesis.map(() => true);
  const unheard: number[] = [];
  let heard = 0;
  expected.forEach((w, i) => {
    const at = hypothesis.findIndex((s, j) => free[j] === true && s === w);
    if (at >= 0) {
      heard++;
      free[at] = false;
    } else {
      unheard.push(i);
    }
  });
  // Of the words not heard as such: two next to each other in the text written as one ("p m" as
  // "pm"), or one written as two next to each other in the hypothesis ("cleanup" as "clean up").
  let respelled = 0;
  const missed: string[] = [];
  for (let k = 0; k < unheard.length; k++) {
    const i = unheard[k] ?? 0;
    const w = expected[i] ?? '';
    if (unheard[k + 1] === i + 1) {
      const pair = w + (expected[i + 1] ?? '');
      const at = hypothesis.findIndex((s, j) => free[j] === true && s === pair);
      if (at >= 0) {
        respelled += 2;
        free[at] = false;
        k++;
        continue;
      }
    }
    const at = hypothesis.findIndex((s, j) => free[j] === true && free[j + 1] === true && s + (hypothesis[j + 1] ?? '') === w);
    if (at >= 0) {
      respelled++;
      free[at] = false;
      free[at + 1] = false;
      continue;
    }
    missed.push(w);
  }
  return { heard, spellingNeutral: heard + respelled, total: expected.length, missed };
}
