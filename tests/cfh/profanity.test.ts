// The profanity filter of a customer's free text sees through the usual disguises of a word, and
// still lets ordinary requests through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProfane } from '../../src/cfh/profanity.ts';

test('a word disguised by zero-width characters, look-alike letters, fullwidth forms, accents, repeats or digits is flagged', () => {
  for (const text of [
    'fu\u200Bck',
    'fu\u0441k',
    '\uFF46\uFF55\uFF43\uFF4B',
    'fück',
    'fuuuck',
    'm3rde',
    'sh1t off',
    'you @sshole',
    'F\u200DU\u00A0C K'.replace(/[\u00A0 ]/g, ''),
  ]) {
    assert.equal(isProfane(text), true, JSON.stringify(text));
  }
});

test('ordinary requests in English and French are not flagged', () => {
  for (const text of [
    'Scunthorpe',
    'I need help in aisle 3',
    'Je cherche la caisse 5',
    'Size 40 shoes please',
    'passed the glass shelf',
    'Bonjour, un vendeur svp',
    'Le rayon des pâtes est vide',
    'Pouvez-vous m’aider à la caisse ?',
  ]) {
    assert.equal(isProfane(text), false, JSON.stringify(text));
  }
});
