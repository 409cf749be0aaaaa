// The radio benchmark's word count (bench/speech/scoring.ts): strict, and spelling-neutral for the
// recognizer's other spellings of the same sounds (never homophones or near misses).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scoreWords, words } from '../../bench/speech/scoring.ts';

const score = (said: string, heard: string) => scoreWords(words(said), words(heard));

test('a word is heard once, whatever its place', () => {
  assert.deepEqual(score('price check at register three', 'price check and register three'), { heard: 4, spellingNeutral: 4, total: 5, missed: ['at'] });
  assert.equal(score('the the', 'the').heard, 1);
});

test('"p m" written "pm" and "cleanup" written "clean up" count as heard only when spelling-neutral', () => {
  assert.deepEqual(score('at three thirty p m', 'at three thirty pm'), { heard: 3, spellingNeutral: 5, total: 5, missed: [] });
  assert.deepEqual(score('cleanup needed', 'clean up needed'), { heard: 1, spellingNeutral: 2, total: 2, missed: [] });
  assert.deepEqual(score('to the lumber yard', 'to the lumberyard'), { heard: 2, spellingNeutral: 4, total: 4, missed: [] });
});

test('homophones, near misses and words apart in the text or the hypothesis are not respelled', () => {
  assert.equal(score('register two', 'register to').spellingNeutral, 1);
  assert.equal(score('in aisle seven', 'denial seven').spellingNeutral, 1);
  // "p" and "m" are not next to each other in the text.
  assert.equal(score('p at m', 'pm').spellingNeutral, 0);
  // "clean" and "up" are not next to each other in the hypothesis.
  assert.equal(score('cleanup', 'clean now up').spellingNeutral, 0);
  // A hypothesis word already matched is not used again.
  assert.equal(score('up cleanup', 'clean up').spellingNeutral, 1);
});
