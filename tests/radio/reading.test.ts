// How every engine reads English: prices, times, aisle numbers and abbreviations as a person says them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numberToWords, readingOf } from '../../src/radio/speech/reading.ts';

const CASES: [string, string][] = [
  ['$4.99', 'four dollars ninety-nine'],
  ['$4.05', 'four dollars and five cents'],
  ['$0.99', 'ninety-nine cents'],
  ['$1,299.99', 'one thousand two hundred ninety-nine dollars ninety-nine'],
  ['Aisle 7', 'Aisle seven'],
  ['aisle 12', 'aisle twelve'],
  ['Reg 3', 'register three'],
  ['Dept. 21 asap', 'department twenty-one as soon as possible'],
  ['closing at 9:05pm', 'closing at nine oh five p m'],
  ['open at 8 am', 'open at eight a m'],
  ['at 10:30', 'at ten thirty'],
  ['Huddle at 3:30 pm.', 'Huddle at three thirty p m.'],
  ['Closes at 9 p.m. Thank you.', 'Closes at nine p m. Thank you.'],
  ['at 9 p.m. tonight', 'at nine p m tonight'],
  ['at 14:00', 'at two p m'],
  ['at 10:00', "at ten o'clock"],
  ['Sam is on it: garden center.', 'Sam is on it, garden center.'],
  ['Price check at register 3: $4.99.', 'Price check at register three, four dollars ninety-nine.'],
  ['2nd floor', 'second floor'],
  ['the 21st', 'the twenty-first'],
  ['2.5 lbs', 'two point five pounds'],
  ['10% off', 'ten percent off'],
  ['call 5551234567', 'call five five five one two three four five six seven'],
  ['code 007', 'code zero zero seven'],
  ['<speak>aisle 5</speak>', '<speak>aisle five</speak>'],
];

test('prices, times, aisle numbers and abbreviations are read as words, the same for every engine', () => {
  for (const [text, read] of CASES) assert.equal(readingOf(text), read, text);
});

test('numbers in words', () => {
  assert.equal(numberToWords(0), 'zero');
  assert.equal(numberToWords(105), 'one hundred five');
  assert.equal(numberToWords(1_000_001), 'one million one');
  assert.equal(numberToWords(40), 'forty');
});
