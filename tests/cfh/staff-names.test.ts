// The claimer's name as a customer sees it, in each of the location's staff_name_formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staffNameFor } from '../../src/cfh/rules.ts';

test("a first name is what comes before a space, '@', '.', '_' or ',': a login or an address never shows whole", () => {
  const cases: [string, string][] = [
    ['Ann Lee', 'Ann'],
    ['  Ann   Lee ', 'Ann'],
    ['Bob.Smith@corp.example', 'Bob'],
    ['bob_smith', 'bob'],
    ['Smith, Bob', 'Smith'],
    ['carol@store.example', 'carol'],
    ['Zoë', 'Zoë'],
    ['@.,_', 'An associate'],
  ];
  for (const [name, first] of cases) assert.equal(staffNameFor(name, 'first'), first, name);
});

test('the full format shows the name as staff typed it, the generic one no name, and no claimer none', () => {
  assert.equal(staffNameFor('Bob.Smith@corp.example', 'full'), 'Bob.Smith@corp.example');
  assert.equal(staffNameFor('Ann Lee', 'generic'), 'An associate');
  assert.equal(staffNameFor(null, 'first'), null);
});
