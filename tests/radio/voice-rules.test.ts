// Reading what staff say (voice actions): the phrase table, and matching the names of requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namesMatch, normalizePhrase, readPhrase } from '../../src/radio/voice-rules.ts';
import { PHRASES } from './voice-phrases.ts';

test(`the phrase table (${PHRASES.length} phrases): each is read as the intent and the name it gives`, () => {
  assert.ok(PHRASES.length >= 60);
  const wrong: string[] = [];
  for (const [phrase, intent, named] of PHRASES) {
    const read = readPhrase(phrase);
    if (read.intent !== intent || read.named !== named) wrong.push(`"${phrase}": ${read.intent} "${read.named}", expected ${intent} "${named}"`);
  }
  assert.deepEqual(wrong, []);
});

test('numbers are matched as digits or words; a name matches when all its words, or all the named words, are there', () => {
  assert.equal(normalizePhrase('Aisle Seven'), 'aisle 7');
  assert.equal(normalizePhrase('Aisle twenty-two'), 'aisle 22');
  assert.ok(namesMatch('aisle 7', 'Aisle 7'));
  assert.ok(namesMatch('aisle 7', 'aisle seven'));
  assert.ok(namesMatch('paint counter', 'Paint counter'));
  assert.ok(namesMatch('paint', 'Paint counter'));
  assert.ok(!namesMatch('aisle 7', 'Aisle 17'));
  assert.ok(!namesMatch('garden center', 'Paint counter'));
  assert.ok(!namesMatch('', 'Paint counter'));
});

test('any text is read without throwing, however long or strange', () => {
  for (const text of ['\u0000', '\uD800', 'a'.repeat(5_000), "I'm on it ".repeat(300), '??', '\u202E on it', '$(rm -rf /)']) {
    const read = readPhrase(text);
    assert.ok(['claim', 'on_the_way', 'none'].includes(read.intent));
  }
});
